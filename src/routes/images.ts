import type { Routes } from '../pipeline/gateway.js';
import type { GatewayRequest } from '../pipeline/request.js';
import { principalOf } from '../auth/hook.js';
import type { Principal } from '../auth/principal.js';
import { GatewayError, errors } from '../http/errors.js';
import { redactDeep } from '../http/redact.js';
import { limitModel } from '../pipeline/steps.js';
import { claimUsageRow, noteUsageModel } from '../limits/usage-backstop.js';
import { imageCostMicros, imageQuote } from '../limits/pricing.js';
import { holdUnits, spentUnits } from '../relay/image-cost.js';
import type { CatalogModel } from '../relay/catalog.js';
import { CLIENT_CLOSED, meteredCall, resolveModel, type MeteredRequest, type Outcome } from '../relay/metered.js';
import { deliverImages } from '../relay/image-delivery.js';
import { imageFilesFor, type ImageFiles } from '../relay/image-files.js';
import { baseForRequest } from '../tasks/content/gateway-url.js';
import { ImagesRelay } from '../relay/images.js';
import type { Target } from '../upstream/target.js';
import type { ImageParams, ImagesResult } from '../providers/image-types.js';
import type { Services } from '../services.js';
import { parseEditFields, parseGenerationBody } from './image-params.js';
import { ImageUpload, busboyLimits, discardRest, type UploadLimits } from './image-upload.js';

// POST /v1/images/generations (JSON) and POST /v1/images/edits (multipart/form-data) in the OpenAI
// Images format, each one metered call (relay/metered.ts): model check → credit reserve (n × price
// per image) → relay → settle by the images returned (release when none) → one usage row.

type Endpoint = 'images.generations' | 'images.edits';
/** The attempt on one channel (the relay's ImagesRelay, generating or editing). */
type Operation = (target: Target) => Promise<ImagesResult>;

/** The model a request names, if this key may use it and it makes images. */
function imageModel(services: Services, p: Principal, id: string): CatalogModel {
  return resolveModel(
    services.catalog,
    p,
    id,
    'image',
    (m) => `The model "${id}" is a ${m.config.kind} model; /v1/images needs an image model (see GET /v1/models, "image-generation").`,
  );
}

async function serve(request: GatewayRequest, services: Services, endpoint: Endpoint, model: CatalogModel, params: ImageParams, inputImages: number, op: Operation, files: ImageFiles, queued: boolean): Promise<unknown> {
  let served: Target | undefined;
  const metered: MeteredRequest = {
    principal: principalOf(request),
    model,
    endpoint,
    trace: request.trace,
    started: Date.now(),
    claimRow: () => claimUsageRow(request),
    departed: request.departed,
    goneMessage: 'The client closed the request before the images were ready.',
    inputUnits: inputImages,
    holdMicros: imageCostMicros(model.config, holdUnits(params)),
    // A queued request may outlive its wait and be settled by another process: its hold is a row.
    durable: queued,
  };
  const value = await meteredCall(
    services,
    metered,
    (target) => {
      served = target;
      return op(target);
    },
    async (result: ImagesResult, call): Promise<Outcome<unknown>> => {
      const pending = result.pending;
      if (pending) {
        // The wait ended first: the tasks go on, and the image-wait worker settles them by what they make.
        const error = request.departed.aborted
          ? new GatewayError(CLIENT_CLOSED, 'client_closed_request', 'The client closed the request before the images were ready.')
          : new GatewayError(504, 'upstream_timeout', `The images were not ready in time (task ${pending.taskIds.join(', ')}); the task is left to finish and is charged only what it makes. Retry, or raise the model's wait.timeout_s.`);
        await services.imageWaits.record({
          principal: metered.principal,
          model: model.id,
          channel: call.channel,
          endpoint,
          status: error.status,
          error: error.message,
          inputUnits: inputImages,
          started: metered.started,
          hold: call.hold,
          pricedBy: params,
          pending,
        });
        return { status: error.status, value: error, handedOff: true };
      }
      // An edit without response_format answers base64, as OpenAI's edit models do: clients such as the
      // Vercel AI SDK's edit path send none and read only b64_json.
      const format = params.response_format ?? (endpoint === 'images.edits' ? 'b64_json' : undefined);
      const data = await deliverImages(result, format, { target: served!, upstream: services.upstream, files, base: baseForRequest(services.config, request), signal: request.departed });
      const spent = imageQuote(model.config, spentUnits(params, data.length, result.billed));
      return {
        // Settled by the images returned (none: nothing charged), in the unit the model is priced in.
        status: 200,
        output: data.length,
        costMicros: spent.micros,
        billedBy: spent.billedBy,
        value: {
          created: result.created,
          ...result.extra,
          // Provider strings (URLs, revised prompts) go out scrubbed of upstream secrets.
          data: redactDeep(data),
          ...(result.usage !== undefined ? { usage: result.usage } : {}),
        },
      };
    },
  );
  if (value instanceof GatewayError) throw value;
  return value;
}

export interface ImageRouteOptions {
  limits: UploadLimits;
  maxN: number;
  /** After a refusal, how much more of the body is read and discarded before the connection is closed. */
  drainCapBytes: number;
}

export function imageRouteOptions(config: Services['config']): ImageRouteOptions {
  const mb = (v: number) => Math.floor(v * 1024 * 1024);
  return {
    limits: { maxFiles: config.images.max_files, maxFileBytes: mb(config.images.max_file_mb), maxTotalBytes: mb(config.images.max_total_mb) },
    maxN: config.images.max_n,
    // A client that declared its length is already held to the body limit; read that much so it gets the answer.
    drainCapBytes: Math.max(mb(config.server.body_limit_mb), mb(config.images.max_total_mb)),
  };
}

export function registerImageRoutes(app: Routes, services: Services): void {
  const opts = imageRouteOptions(services.config);
  const images = new ImagesRelay(services.upstream);
  const files = imageFilesFor(services.config);

  // Images the gateway stores for response_format url: the unguessable name is the credential, until it expires.
  app.get<{ Params: { name: string } }>('/v1/images/files/:name', async (request, reply) => {
    const file = await files.open(request.params.name);
    if (!file) throw new GatewayError(404, 'not_found', 'This image URL does not exist or has expired.');
    return reply.header('content-type', file.mime).header('cache-control', 'private, max-age=3600').send(file.body);
  });

  app.post('/v1/images/generations', { auth: true, billable: 'images.generations', idempotent: true }, async (request) => {
    const { model, params } = parseGenerationBody(request.body, opts.maxN);
    const m = imageModel(services, principalOf(request), model);
    // The rate-limit hook already counted a JSON body's model; this is a no-op then.
    await limitModel(request, model);
    return serve(request, services, 'images.generations', m, params, 0, (target) => images.generate(target, params, request.departed, m.config.wait), files, images.queued(m));
  });

  // A multipart form is read on this route only, with the gateway's upload limits.
  app.post('/v1/images/edits', { auth: true, billable: 'images.edits', idempotent: true, multipart: busboyLimits(opts.limits) }, async (request) => {
      if (!request.isMultipart()) {
        throw errors.invalidRequest('POST /v1/images/edits takes multipart/form-data: `image` file(s), `prompt`, and optional `mask`, `model`, `n`, `size`, `response_format`.');
      }
      const p = principalOf(request);
      const upload = new ImageUpload(opts.limits);
      try {
        let early: CatalogModel | undefined;
        try {
          await upload.read(request, async (name, value) => {
            if (name !== 'model' || early || !value) return;
            noteUsageModel(request, value);
            early = imageModel(services, p, value);
            await limitModel(request, value);
          });
        } catch (err) {
          discardRest(request, opts.drainCapBytes);
          throw err;
        }
        const { model, params } = parseEditFields(upload.fields, opts.maxN);
        if (!upload.images.length) throw errors.invalidRequest('`image` is required: upload one or more PNG, JPEG or WEBP files.', 'image');
        const m = early?.id === model ? early : imageModel(services, p, model);
        await limitModel(request, model);
        const input = { ...params, images: upload.images, mask: upload.mask };
        return await serve(request, services, 'images.edits', m, params, upload.images.length, (target) => images.edit(target, input, request.departed, m.config.wait), files, images.queued(m));
      } finally {
        await upload.cleanup();
      }
  });
}

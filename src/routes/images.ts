import type { Routes } from '../pipeline/gateway.js';
import type { GatewayRequest } from '../pipeline/request.js';
import { principalOf } from '../auth/hook.js';
import type { Principal } from '../auth/principal.js';
import { errors } from '../http/errors.js';
import { redactDeep } from '../http/redact.js';
import { limitModel } from '../pipeline/steps.js';
import { claimUsageRow, noteUsageModel } from '../limits/usage-backstop.js';
import { imageCostMicros } from '../limits/pricing.js';
import type { CatalogModel } from '../relay/catalog.js';
import { meteredCall, resolveModel, type MeteredRequest } from '../relay/metered.js';
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

function serve(request: GatewayRequest, services: Services, endpoint: Endpoint, model: CatalogModel, params: ImageParams, inputImages: number, op: Operation): Promise<unknown> {
  const metered: MeteredRequest = {
    principal: principalOf(request),
    model,
    endpoint,
    started: Date.now(),
    claimRow: () => claimUsageRow(request),
    departed: request.departed,
    goneMessage: 'The client closed the request before the images were ready.',
    inputUnits: inputImages,
    holdMicros: imageCostMicros(model.config, params.n ?? 1),
  };
  return meteredCall(
    services,
    metered,
    op,
    async (result: ImagesResult) => ({
      // Settled by the images returned (none: nothing charged).
      status: 200,
      output: result.data.length,
      costMicros: imageCostMicros(model.config, result.data.length),
      value: {
        created: result.created,
        ...result.extra,
        // Provider strings (URLs, revised prompts) go out scrubbed of upstream secrets.
        data: redactDeep(result.data),
        ...(result.usage !== undefined ? { usage: result.usage } : {}),
      },
    }),
  );
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

  app.post('/v1/images/generations', { auth: true, billable: 'images.generations' }, async (request) => {
    const { model, params } = parseGenerationBody(request.body, opts.maxN);
    const m = imageModel(services, principalOf(request), model);
    // The rate-limit hook already counted a JSON body's model; this is a no-op then.
    await limitModel(request, model);
    return serve(request, services, 'images.generations', m, params, 0, (target) => images.generate(target, params, request.departed));
  });

  // A multipart form is read on this route only, with the gateway's upload limits.
  app.post('/v1/images/edits', { auth: true, billable: 'images.edits', multipart: busboyLimits(opts.limits) }, async (request) => {
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
        return await serve(request, services, 'images.edits', m, params, upload.images.length, (target) => images.edit(target, input, request.departed));
      } finally {
        await upload.cleanup();
      }
  });
}

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import multipart from '@fastify/multipart';
import { principalOf } from '../auth/hook.js';
import { mayUseModel, type Principal } from '../auth/principal.js';
import { GatewayError, errors, statusOf } from '../http/errors.js';
import { redactDeep } from '../http/redact.js';
import { limitModel } from '../limits/hook.js';
import { markUsageRecorded, noteUsageModel } from '../limits/usage-backstop.js';
import { imageCostMicros } from '../limits/pricing.js';
import type { CatalogModel } from '../relay/catalog.js';
import { failureToGatewayError } from '../relay/relay.js';
import type { Target } from '../upstream/target.js';
import { UpstreamFailure } from '../upstream/failure.js';
import { imagesAdapterFor } from '../providers/index.js';
import type { ImageParams, ImagesAdapter, ImagesCall, ImagesResult } from '../providers/image-types.js';
import type { Services } from '../services.js';
import { parseEditFields, parseGenerationBody } from './image-params.js';
import { ImageUpload, busboyLimits, discardRest, type UploadLimits } from './image-upload.js';

// POST /v1/images/generations (JSON) and POST /v1/images/edits (multipart/form-data) in the OpenAI
// Images format: model check → credit reserve (n × price per image) → relay → settle by the images
// returned (release when none) → one usage row per request.

type Endpoint = 'images.generations' | 'images.edits';
type Operation = (adapter: ImagesAdapter, call: ImagesCall, target: Target) => Promise<ImagesResult>;

/** The model a request names, if this key may use it and it makes images. */
function imageModel(services: Services, p: Principal, id: string): CatalogModel {
  const m = services.catalog.get(id);
  if (!m) throw errors.modelNotFound(id);
  if (!mayUseModel(p, id)) throw errors.modelNotAllowed(id);
  if (m.config.kind !== 'image') {
    throw errors.invalidRequest(`The model "${id}" is a ${m.config.kind} model; /v1/images needs an image model (see GET /v1/models, "image-generation").`, 'model');
  }
  return m;
}

/** Aborts the upstream call when the client goes away before its answer was sent. */
function abortOnDisconnect(reply: FastifyReply): AbortSignal {
  const ac = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) ac.abort();
  });
  return ac.signal;
}

async function serve(
  services: Services,
  request: FastifyRequest,
  reply: FastifyReply,
  endpoint: Endpoint,
  model: CatalogModel,
  params: ImageParams,
  inputImages: number,
  op: Operation,
): Promise<unknown> {
  const p = principalOf(request);
  const started = Date.now();
  const requested = params.n ?? 1;
  const hold = await services.credit.reserve(p, imageCostMicros(model.config, requested));
  const call: ImagesCall = { upstream: services.upstream, signal: abortOnDisconnect(reply) };
  let channel = '';
  const row = (status: number, images: number, cost: number, overage = 0) => {
    markUsageRecorded(request);
    services.ledger.record({
      key_id: p.keyId,
      model: model.id,
      channel,
      endpoint,
      status,
      input_units: inputImages,
      output_units: images,
      cost_micros: cost,
      overage_micros: overage,
      latency_ms: Date.now() - started,
    });
  };
  let result: ImagesResult;
  try {
    result = await services.relay.run(model, (target) => {
      channel = target.channel.name;
      const found = imagesAdapterFor(target);
      if (!found) throw errors.upstreamError(`The channel "${target.channel.name}" (${target.channel.type}) cannot serve images; fix the gateway's configuration.`);
      return op(found.adapter, call, found.target);
    });
  } catch (err) {
    await services.credit.release(hold);
    const g = toError(err);
    row(statusOf(g), 0, 0);
    throw g;
  }
  const images = result.data.length;
  const settled = await services.credit.settle(hold, imageCostMicros(model.config, images));
  row(200, images, settled?.chargedMicros ?? 0, settled?.overageMicros ?? 0);
  return {
    created: result.created,
    ...result.extra,
    // Provider strings (URLs, revised prompts) go out scrubbed of upstream secrets.
    data: redactDeep(result.data),
    ...(result.usage !== undefined ? { usage: result.usage } : {}),
  };
}

/** An upstream failure in the gateway's terms; anything else is passed on as it is. */
function toError(err: unknown): unknown {
  if (err instanceof UpstreamFailure) {
    if (err.kind === 'aborted') return new GatewayError(499, 'client_closed_request', 'The client closed the request before the images were ready.');
    return failureToGatewayError(err);
  }
  return err;
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

export function registerImageRoutes(app: FastifyInstance, services: Services): void {
  const opts = imageRouteOptions(services.config);

  app.post('/v1/images/generations', { config: { auth: true } }, async (request, reply) => {
    const { model, params } = parseGenerationBody(request.body, opts.maxN);
    const m = imageModel(services, principalOf(request), model);
    // The rate-limit hook already counted a JSON body's model; this is a no-op then.
    await limitModel(request, model);
    return serve(services, request, reply, 'images.generations', m, params, 0, (adapter, call, target) => adapter.generate(call, target, params));
  });

  // Multipart parsing exists only in this scope, with the gateway's upload limits.
  void app.register(async (scope) => {
    await scope.register(multipart, { limits: busboyLimits(opts.limits), throwFileSizeLimit: true });
    scope.post('/v1/images/edits', { config: { auth: true } }, async (request, reply) => {
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
        return await serve(services, request, reply, 'images.edits', m, params, upload.images.length, (adapter, call, target) => adapter.edit(call, target, input));
      } finally {
        await upload.cleanup();
      }
    });
  });
}

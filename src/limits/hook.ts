import type { FastifyInstance, FastifyRequest } from 'fastify';
import { mayUseModel } from '../auth/principal.js';
import { GatewayError } from '../http/errors.js';
import { whenClosed } from '../http/departure.js';
import type { KeyAdmission, RateLimits } from './rate-limits.js';
import type { UsageLedger } from './ledger.js';
import { LEDGER_ENDPOINTS, markUsageRecorded } from './usage-backstop.js';

interface LimitContext {
  limits: RateLimits;
  /** Where refusals are recorded (one ledger row per request, refused ones included). */
  ledger: Pick<UsageLedger, 'record'> | null;
}

declare module 'fastify' {
  interface FastifyInstance {
    rateLimits: LimitContext;
  }
  interface FastifyRequest {
    /** The model whose rpm this request already counted against (counted once per request). */
    rateLimitedModel: string | null;
  }
}

/**
 * Applies rate limits to every `auth: true` route, after the auth hook (register this after
 * registerAuth): the key's rpm and concurrency as soon as the key is known (onRequest, before the
 * body is read), the model's rpm once a JSON body naming a `model` is parsed (preHandler).
 * Routes whose model is not in a JSON body (multipart image edits) call limitModel() themselves.
 */
export function registerRateLimits(app: FastifyInstance, limits: RateLimits, ledger: Pick<UsageLedger, 'record'> | null = null): void {
  app.decorate('rateLimits', { limits, ledger });
  app.decorateRequest('rateLimitedModel', null);

  // Callback hooks: a key or model without a limit (nothing to count) passes without a promise.
  app.addHook('onRequest', (request, reply, done) => {
    if (!request.routeOptions.config?.auth || !request.principal) return done();
    const p = request.principal;
    if (p.concurrency <= 0 && p.rpm <= 0) return done();
    const admit = (admission: KeyAdmission) => {
      // Freed exactly once, when the response has been sent or the client went away, whichever comes first.
      const slot = admission.slot;
      if (slot) whenClosed(request, () => slot.release());
      for (const k in admission.headers) reply.header(k, admission.headers[k]);
      done();
    };
    const refuse = (err: Error) => {
      recordRefusal(request, '', err);
      done(err);
    };
    let admission;
    try {
      admission = limits.admitKeyNow(p);
    } catch (err) {
      return refuse(err as Error);
    }
    if (admission instanceof Promise) admission.then(admit, refuse);
    else admit(admission);
  });

  app.addHook('preHandler', (request, _reply, done) => {
    if (!request.routeOptions.config?.auth) return done();
    const body = request.body as { model?: unknown } | null | undefined;
    if (body && typeof body === 'object' && !Array.isArray(body) && typeof body.model === 'string' && limits.modelRpm(body.model) > 0) {
      limitModel(request, body.model).then(() => done(), done);
    } else done();
  });
}

/**
 * Counts the request against `model`'s rpm, once per request; throws 429 when over (and gives the
 * key's rpm back: a refused request counts against no limit). Skipped for a
 * model the key may not use: the route answers 403 and the model's budget stays for allowed callers.
 */
export async function limitModel(request: FastifyRequest, model: string): Promise<void> {
  if (request.rateLimitedModel === model) return;
  if (request.principal && !mayUseModel(request.principal, model)) return;
  const { limits } = request.server.rateLimits;
  try {
    await limits.admitModel(model);
  } catch (err) {
    if (request.principal) await limits.refundKey(request.principal);
    recordRefusal(request, model, err);
    throw err;
  }
  request.rateLimitedModel = model;
}

/** A request refused by a limit never reaches its route, so its ledger row is written here. */
function recordRefusal(request: FastifyRequest, model: string, err: unknown): void {
  const { ledger } = request.server.rateLimits;
  if (!ledger || !request.principal || !(err instanceof GatewayError) || err.status !== 429) return;
  const url = request.routeOptions.url ?? '';
  markUsageRecorded(request);
  ledger.record({
    key_id: request.principal.keyId,
    model,
    channel: '',
    endpoint: LEDGER_ENDPOINTS[url] ?? url,
    status: 429,
    input_units: 0,
    output_units: 0,
    cost_micros: 0,
    latency_ms: 0,
  });
}

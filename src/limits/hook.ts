import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { mayUseModel } from '../auth/principal.js';
import { principalOf } from '../auth/hook.js';
import type { Slot } from './limit-store.js';
import type { RateLimits } from './rate-limits.js';

declare module 'fastify' {
  interface FastifyInstance {
    rateLimits: RateLimits;
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
export function registerRateLimits(app: FastifyInstance, limits: RateLimits): void {
  app.decorate('rateLimits', limits);
  app.decorateRequest('rateLimitedModel', null);

  app.addHook('onRequest', async (request, reply) => {
    if (!request.routeOptions.config?.auth) return;
    const admission = await limits.admitKey(principalOf(request));
    if (admission.slot) releaseWhenDone(reply, admission.slot);
    for (const [k, v] of Object.entries(admission.headers)) reply.header(k, v);
  });

  app.addHook('preHandler', async (request) => {
    if (!request.routeOptions.config?.auth) return;
    const body = request.body as { model?: unknown } | null | undefined;
    if (body && typeof body === 'object' && !Array.isArray(body) && typeof body.model === 'string') await limitModel(request, body.model);
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
  const limits = request.server.rateLimits;
  try {
    await limits.admitModel(model);
  } catch (err) {
    if (request.principal) await limits.refundKey(request.principal);
    throw err;
  }
  request.rateLimitedModel = model;
}

/** Frees the slot exactly once, when the response has been sent or the client went away, whichever comes first. */
function releaseWhenDone(reply: FastifyReply, slot: Slot): void {
  const res = reply.raw;
  if (res.closed) {
    slot.release();
    return;
  }
  res.once('close', () => slot.release());
}

import type { FastifyInstance, FastifyRequest } from 'fastify';
import { errors } from '../http/errors.js';
import type { Principal } from './principal.js';
import { presentedKey, type Authenticator } from './authenticator.js';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
  interface FastifyContextConfig {
    /** The route needs a valid key. */
    auth?: boolean;
  }
}

/** Rejects a request to an `auth: true` route unless it carries a valid, live key. */
export function registerAuth(app: FastifyInstance, authenticator: Authenticator): void {
  app.decorateRequest('principal', null);
  // A callback hook: a cached key (nearly every request) is answered without a promise.
  app.addHook('onRequest', (request: FastifyRequest, _reply, done) => {
    if (!request.routeOptions.config?.auth) return done();
    const presented = presentedKey(request.headers) ?? queryKey(request);
    const admit = (principal: Principal | null) => {
      if (!principal) return done(authenticator.refusal(presented));
      request.principal = principal;
      done();
    };
    let found;
    try {
      found = authenticator.resolve(presented);
    } catch (err) {
      return done(err as Error);
    }
    if (found instanceof Promise) found.then(admit, (err: Error) => done(err));
    else admit(found);
  });
}

/** Google's clients may send the key as `?key=` on the Gemini routes (and only there). */
function queryKey(request: FastifyRequest): string | undefined {
  if (!request.url.startsWith('/v1beta/')) return undefined;
  const key = (request.query as { key?: unknown } | undefined)?.key;
  return typeof key === 'string' && key ? key : undefined;
}

/** The principal of an authenticated route (registerAuth guarantees it is set). */
export function principalOf(request: { principal: Principal | null }): Principal {
  if (!request.principal) throw errors.invalidApiKey();
  return request.principal;
}

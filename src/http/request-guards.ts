import type { FastifyInstance } from 'fastify';
import { GatewayError } from './errors.js';

/** Deeper than any real chat, image or video request; deep enough bodies would overflow the stack later. */
export const MAX_JSON_DEPTH = 64;

export const tooLarge = () => new GatewayError(413, 'request_too_large', 'The request body is larger than this gateway accepts.');
export const tooDeep = () => new GatewayError(400, 'invalid_request', `The request body is nested deeper than ${MAX_JSON_DEPTH} levels.`);

/**
 * Guards every route, whatever its body parser: a declared Content-Length over the limit is refused
 * before auth and before a byte is read (multipart routes included), and a parsed JSON body nested
 * deeper than MAX_JSON_DEPTH is refused before any handler serializes it again.
 */
export function registerRequestGuards(app: FastifyInstance, bodyLimitBytes: number): void {
  // Callback hooks, not async ones: they run on every request and never wait for anything.
  app.addHook('onRequest', (request, _reply, done) => {
    const declared = request.headers['content-length'];
    if (declared !== undefined && /^\d+$/.test(declared) && Number(declared) > bodyLimitBytes) return done(tooLarge());
    // A body framed by a transfer coding other than chunked (RFC 9112 6.1) has no length the server
    // can read: refused here, before a fast handler could answer it ahead of the parser's own error.
    const coding = request.headers['transfer-encoding'];
    if (coding !== undefined && !/(?:^|,)[ \t]*chunked[ \t]*$/i.test(coding)) {
      return done(new GatewayError(400, 'invalid_request', 'The request\'s Transfer-Encoding must end in chunked; no other transfer coding is accepted.'));
    }
    done();
  });
  app.addHook('preValidation', (request, _reply, done) => {
    // Only JSON: other parsers (multipart) may build objects with cycles.
    if (/json/i.test(request.headers['content-type'] ?? '') && request.body !== null && typeof request.body === 'object' && depthExceeds(request.body, MAX_JSON_DEPTH)) {
      return done(tooDeep());
    }
    done();
  });
}

/**
 * Whether any object or array sits deeper than `max` levels (the root is level 1). Recursive, but
 * never more than `max` calls deep: a level past `max` answers at once, so a hostile body cannot
 * overflow the stack here. No array or pair is built per container: this walk runs on every JSON
 * body.
 */
export function depthExceeds(root: object, max: number): boolean {
  return deeper(root, 1, max);
}

function deeper(value: object, depth: number, max: number): boolean {
  if (depth > max) return true;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const child: unknown = value[i];
      if (child !== null && typeof child === 'object' && deeper(child, depth + 1, max)) return true;
    }
    return false;
  }
  if (Buffer.isBuffer(value)) return false;
  for (const key in value) {
    const child: unknown = (value as Record<string, unknown>)[key];
    if (child !== null && typeof child === 'object' && deeper(child, depth + 1, max)) return true;
  }
  return false;
}

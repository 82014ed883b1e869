import { GatewayError, errorBody, errors, familyHeaders, familyOf } from './errors.js';
import { redact } from './redact.js';
import { tooLarge } from './request-guards.js';
import { validationMessage, type SchemaError } from './validation-message.js';

// How anything thrown while a request is handled becomes its answer: the gateway's status table and
// the error body of the path's family. Every step of the request pipeline (src/pipeline/steps.ts)
// answers its refusals and failures through errorAnswer().

/** A JSON body that does not parse (or names a prototype key). */
export const invalidJson = () => new GatewayError(400, 'invalid_request', 'The request body is not valid JSON.');

/** The answer for an error thrown while handling `url`; a 5xx is logged (its message scrubbed of keys). */
export function errorAnswer(err: unknown, url: string, log: { error(obj: object, msg: string): void }): { status: number; headers: Record<string, string>; body: unknown; message: string } {
  const g = toGatewayError(err);
  // The message may quote client input (a pasted key): scrub it like an answer.
  // An upstream failure names the channel(s) tried, so the operator knows which one to look at.
  if (g.status >= 500) log.error({ err: { message: redact((err as Error)?.message ?? String(err)), code: (err as { code?: unknown })?.code }, ...(g.logFields ? { upstream: redactFields(g.logFields) } : {}) }, g.logFields ? `request failed: upstream ${upstreamNames(g.logFields)}` : 'request failed');
  const family = familyOf(url);
  return { status: g.status, headers: { ...familyHeaders(family), ...g.headers }, body: errorBody(family, g), message: redact(g.message) };
}

function redactFields(fields: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(fields).map(([k, v]) => [k, Array.isArray(v) ? v.map((e: Record<string, unknown>) => Object.fromEntries(Object.entries(e).map(([ek, ev]) => [ek, typeof ev === 'string' ? redact(ev) : ev]))) : v]),
  );
}

function upstreamNames(fields: Record<string, unknown>): string {
  const channels = (fields.channels as { channel: string; error: string }[] | undefined) ?? [];
  return channels.map((c) => `channel "${c.channel}": ${redact(c.error)}`).join('; ') || 'failed';
}

/** Maps anything thrown in a request to the gateway's status table. */
export function toGatewayError(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  const e = err as { code?: string; statusCode?: number; message?: string; validation?: SchemaError[]; validationContext?: string };
  if (e && Array.isArray(e.validation)) return new GatewayError(400, 'invalid_request', `Invalid request: ${validationMessage(e.validationContext ?? 'body', e.validation)}.`);
  switch (e?.code) {
    // The store's DatabaseUnavailableError: a restart, failover, hang or lock; the client may retry.
    case 'database_unavailable':
      return errors.databaseUnavailable();
    default:
      break;
  }
  const status = typeof e?.statusCode === 'number' ? e.statusCode : 500;
  if (status >= 400 && status < 500) {
    // A library's own 4xx: keep the status, give a clean message.
    if (status === 413) return tooLarge();
    return new GatewayError(status, 'invalid_request', 'Bad request.');
  }
  return new GatewayError(500, 'internal_error', 'The gateway failed to handle this request.');
}

import sjson from 'secure-json-parse';
import { GatewayError, errors } from './errors.js';
import { MAX_JSON_DEPTH, depthExceeds } from './request-guards.js';

// JSON a client sends as text inside a request (a multipart field, a tool call's arguments) is
// parsed with the limits of a JSON body: prototype keys refused, at most MAX_JSON_DEPTH levels.
// Without the depth limit a deeply nested text parses fine and overflows the stack later, when
// the value is walked or serialized again.

/** What the JSON body parser refuses: a `__proto__` key, or `constructor.prototype`. */
export const JSON_PARSE_OPTIONS = { protoAction: 'error', constructorAction: 'error' } as const;

export type JsonField = { ok: true; value: unknown } | { ok: false; problem: 'invalid' | 'too_deep' };

/**
 * `text` as JSON within the body limits; `maxDepth` is the depth the field may have on its own
 * (less than MAX_JSON_DEPTH where the field sits inside an object that counts too).
 */
export function readJsonField(text: string, maxDepth = MAX_JSON_DEPTH): JsonField {
  let value: unknown;
  try {
    value = sjson.parse(text, JSON_PARSE_OPTIONS);
  } catch {
    return { ok: false, problem: 'invalid' };
  }
  if (value !== null && typeof value === 'object' && depthExceeds(value, maxDepth)) return { ok: false, problem: 'too_deep' };
  return { ok: true, value };
}

/** The 400 for a field nested past the limit, naming it. */
export function fieldTooDeep(field: string, note = ''): GatewayError {
  return errors.invalidRequest(`${field} is nested deeper than ${MAX_JSON_DEPTH} levels${note}.`, field);
}

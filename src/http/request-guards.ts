import { GatewayError } from './errors.js';

/** Deeper than any real chat, image or video request; deep enough bodies would overflow the stack later. */
export const MAX_JSON_DEPTH = 64;

export const tooLarge = () => new GatewayError(413, 'request_too_large', 'The request body is larger than this gateway accepts.');
export const tooDeep = () => new GatewayError(400, 'invalid_request', `The request body is nested deeper than ${MAX_JSON_DEPTH} levels.`);

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

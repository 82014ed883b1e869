import { createHash, timingSafeEqual } from 'node:crypto';
import { randomBase62 } from '../ids.js';

export const KEY_PREFIX = 'mg-';
const KEY_BODY_LENGTH = 48;

export function generateApiKey(): string {
  return KEY_PREFIX + randomBase62(KEY_BODY_LENGTH);
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** Constant-time comparison of two hex SHA-256 digests. */
export function hashesEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  return timingSafeEqual(Buffer.from(a, 'hex'), Buffer.from(b, 'hex'));
}

/** Cheap shape check before any hashing or lookup: `mg-` + at least 40 base62 characters. */
export function looksLikeApiKey(key: string): boolean {
  return key.length >= KEY_PREFIX.length + 40 && key.length <= 256 && /^mg-[0-9A-Za-z]+$/.test(key);
}

/** The displayable start of a key: enough to recognise it, never enough to use it. */
export function displayPrefix(key: string): string {
  return key.slice(0, KEY_PREFIX.length + 6);
}

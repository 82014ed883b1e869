import { hashApiKey } from './keys.js';
import { randomBase62 } from '../ids.js';

/** Admin tokens: `mga-` + 48 base62 characters, kept only as their SHA-256 (like application keys). */
export const ADMIN_TOKEN_PREFIX = 'mga-';
const BODY_LENGTH = 48;

export function generateAdminToken(): string {
  return ADMIN_TOKEN_PREFIX + randomBase62(BODY_LENGTH);
}

export const hashAdminToken = hashApiKey;

/** Shape check before any lookup. An application key (`mg-…`) never passes, nor does an admin token pass looksLikeApiKey. */
export function looksLikeAdminToken(token: string): boolean {
  return token.length === ADMIN_TOKEN_PREFIX.length + BODY_LENGTH && /^mga-[0-9A-Za-z]+$/.test(token);
}

/** The displayable start of a token: enough to recognise it, never enough to use it. */
export function adminTokenPrefix(token: string): string {
  return token.slice(0, ADMIN_TOKEN_PREFIX.length + 6);
}

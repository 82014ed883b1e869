import type { Config } from '../config/schema.js';

// The effective configuration as operators may see it: every secret replaced, whatever section it
// sits in (upstream keys, passwords inside database and Redis URLs, anything named like a secret).

export const MASK = '********';
const SECRET_NAME = /(^|_)(key|secret|token|password|passwd)$|api_key|signing/i;

/** A URL with its password (and a user name standing alone, like a token) masked. */
export function maskUrl(text: string): string {
  try {
    const u = new URL(text);
    if (!u.username && !u.password) return text;
    if (u.password) u.password = MASK;
    else u.username = MASK;
    // Query parameters of a URL may carry a token too.
    for (const k of [...u.searchParams.keys()]) if (SECRET_NAME.test(k)) u.searchParams.set(k, MASK);
    return u.toString();
  } catch {
    return text;
  }
}

function mask(value: unknown, name: string): unknown {
  if (typeof value === 'string') {
    if (SECRET_NAME.test(name) && name !== 'key_prefix') return value ? MASK : value;
    return /^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? maskUrl(value) : value;
  }
  if (Array.isArray(value)) return value.map((v) => mask(v, name));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = mask(v, k);
    return out;
  }
  return value;
}

export function maskedConfig(config: Config): Record<string, unknown> {
  return mask(JSON.parse(JSON.stringify(config)), '') as Record<string, unknown>;
}

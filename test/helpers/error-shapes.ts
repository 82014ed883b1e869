import { familyOf, type Family } from '../../src/http/errors.js';

/** Checks that `body` is an error in the exact shape of `family` (docs/errors.md); returns its code or type. */
export function errorShapeProblem(family: Family, body: unknown): string | null {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return 'not a JSON object';
  const b = body as Record<string, unknown>;
  const keys = Object.keys(b).sort().join(',');
  const str = (v: unknown) => typeof v === 'string' && v.length > 0;
  switch (family) {
    case 'openai': {
      if (keys !== 'error') return `openai: top-level keys ${keys}`;
      const e = b.error as Record<string, unknown>;
      if (!e || typeof e !== 'object') return 'openai: error is not an object';
      if (Object.keys(e).sort().join(',') !== 'code,message,param,type') return `openai: error keys ${Object.keys(e).join(',')}`;
      if (!str(e.message) || !str(e.type) || !str(e.code) || !(e.param === null || typeof e.param === 'string')) return 'openai: field types';
      return null;
    }
    case 'anthropic': {
      if (keys !== 'error,type' || b.type !== 'error') return `anthropic: top-level ${keys} type=${String(b.type)}`;
      const e = b.error as Record<string, unknown>;
      if (!e || typeof e !== 'object' || Object.keys(e).sort().join(',') !== 'message,type' || !str(e.type) || !str(e.message)) return 'anthropic: error object';
      return null;
    }
    case 'gemini': {
      if (keys !== 'error') return `gemini: top-level keys ${keys}`;
      const e = b.error as Record<string, unknown>;
      if (!e || typeof e !== 'object' || Object.keys(e).sort().join(',') !== 'code,message,status') return 'gemini: error object';
      if (typeof e.code !== 'number' || !str(e.message) || !/^[A-Z_]+$/.test(String(e.status))) return 'gemini: field types';
      return null;
    }
    case 'video':
      if (keys !== 'code,data,message' || !str(b.code) || !str(b.message) || b.data !== null) return `video: ${keys}`;
      return null;
    case 'admin': {
      if (keys !== 'error') return `admin: top-level keys ${keys}`;
      const e = b.error as Record<string, unknown>;
      if (!e || typeof e !== 'object' || Object.keys(e).sort().join(',') !== 'code,message' || !str(e.code) || !str(e.message)) return 'admin: error object';
      return null;
    }
    default:
      if (!str(b.error) || !str(b.message)) return `plain: ${keys}`;
      return null;
  }
}

/** The family of a raw request target, as the gateway decides it. */
export function familyOfTarget(target: string): Family {
  return familyOf(target);
}

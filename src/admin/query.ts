import { adminErrors } from './errors.js';

// Reading admin query strings: each parameter once, each value checked, every bad one a 400.

export type Query = Record<string, unknown>;

export function str(q: Query, name: string, max = 200): string | undefined {
  const v = q[name];
  if (v === undefined || v === '') return undefined;
  if (typeof v !== 'string' || v.length > max) throw adminErrors.invalid(`${name} must be given once, as text of at most ${max} characters`);
  return v;
}

/** A time as ISO-8601 or Unix milliseconds. */
export function time(q: Query, name: string): number | undefined {
  const v = str(q, name, 40);
  if (v === undefined) return undefined;
  const ms = /^\d{1,15}$/.test(v) ? Number(v) : Date.parse(v);
  if (!Number.isFinite(ms)) throw adminErrors.invalid(`${name} must be an ISO-8601 time or Unix milliseconds`);
  return ms;
}

export function int(q: Query, name: string, min: number, max: number, fallback: number): number {
  const v = str(q, name, 12);
  if (v === undefined) return fallback;
  if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max) throw adminErrors.invalid(`${name} must be a whole number from ${min} to ${max}`);
  return Number(v);
}

export function oneOf<T extends string>(q: Query, name: string, allowed: readonly T[]): T | undefined {
  const v = str(q, name, 40);
  if (v === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(v)) throw adminErrors.invalid(`${name} must be one of ${allowed.join(', ')}`);
  return v as T;
}

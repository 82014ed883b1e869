import type { Condition, Test } from './manifest.js';

// Reading values out of JSON by a dotted path (`task_result.videos.0.url`) and testing them: the
// conditions of manifest rules, create variants and moderation markers.

/** The value at a dotted path; list items by their index. */
export function at(value: unknown, path: string): unknown {
  if (path === '') return value;
  let v = value;
  for (const key of path.split('.')) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string, unknown>)[key];
  }
  return v;
}

/** The text at the first of one or more paths that holds a string or a number ('' when none does). */
export function firstText(value: unknown, paths: string | string[] | undefined): string {
  for (const p of paths === undefined ? [] : Array.isArray(paths) ? paths : [paths]) {
    const t = text(at(value, p));
    if (t) return t;
  }
  return '';
}

/** Absent: missing, null, an empty string or an empty list. */
export function absent(v: unknown): boolean {
  return v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0);
}

/** A string or a number as text; anything else is ''. */
export function text(v: unknown): string {
  if (typeof v === 'string') return v;
  return typeof v === 'number' && Number.isFinite(v) ? String(v) : '';
}

function amount(v: unknown): number | null {
  if (Array.isArray(v)) return v.length;
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  return null;
}

export function passes(v: unknown, t: Test): boolean {
  const given = !absent(v);
  if (t.present !== undefined && given !== t.present) return false;
  if (t.in && !(given && t.in.includes(v as string))) return false;
  if (t.not_in && !(given && !t.not_in.includes(v as string))) return false;
  if (t.min !== undefined && !((amount(v) ?? -Infinity) >= t.min)) return false;
  if (t.max !== undefined && !((amount(v) ?? Infinity) <= t.max)) return false;
  return true;
}

/** Whether a condition holds, reading each named value through `lookup`. */
export function holds(cond: Condition, lookup: (name: string) => unknown): boolean {
  for (const [name, test] of Object.entries(cond)) {
    if (test === undefined) continue;
    if (name === 'any') {
      if (!(test as Condition[]).some((c) => holds(c, lookup))) return false;
    } else if (!passes(lookup(name), test as Test)) return false;
  }
  return true;
}

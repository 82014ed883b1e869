import { UpstreamFailure } from '../upstream/failure.js';
import type { Target } from '../upstream/target.js';
import type { VideoCall } from './video-types.js';

// A provider's balance or quota read, as data: one GET (nothing billable) and where its answer
// keeps the amounts. A manifest declares it under `balance` (docs/providers.md); an `openai`
// channel names one of the shapes of src/providers/openai/balances.ts in `settings.balance`.

export interface BalanceAmountSpec {
  /** What the amount is, for people ("credit balance", "available balance"). */
  label: string;
  /** The amount: a number or numeric text (inside each item when `items` is set). */
  path: string;
  /** A list in the answer: one amount per item, or their sum with `sum`. */
  items?: string;
  /** Only the items whose field (a path in the item) holds one of these values. */
  where?: Record<string, string[]>;
  sum?: boolean;
  /** A second amount subtracted from the first (purchased − used). */
  minus?: string;
  /** The unit as a constant (`USD`, `CNY`, `credits`)… */
  unit?: string;
  /** …or read from the answer (the item's currency). */
  unit_path?: string;
}

export interface BalanceSpec {
  /** The read's path: after the channel's base URL and the API's base path, or after its origin (`from: origin`). */
  path: string;
  from?: 'base' | 'origin';
  /** Query parameters; `{now_ms}` and `{days_ago_ms:N}` stand for times in Unix milliseconds. */
  query?: Record<string, string>;
  amounts: BalanceAmountSpec[];
}

export interface BalanceAmount {
  label: string;
  amount: number;
  unit: string;
}

export interface BalanceCapability {
  /** What a channel with these settings reads (`GET /v1/organization`); undefined when it has no balance read. */
  describe(settings: Record<string, string>): string | undefined;
  /** Reads the balance with the channel's credentials. */
  read(call: VideoCall, target: Target): Promise<BalanceAmount[]>;
}

const DAY_MS = 86_400_000;

/** The query string of a balance read (with its leading `?`, or empty). */
export function balanceQuery(spec: BalanceSpec, now = Date.now()): string {
  const entries = Object.entries(spec.query ?? {});
  if (!entries.length) return '';
  const fill = (v: string) => v.replaceAll('{now_ms}', String(now)).replace(/\{days_ago_ms:(\d{1,4})\}/g, (_m, d: string) => String(now - Number(d) * DAY_MS));
  return `?${new URLSearchParams(Object.fromEntries(entries.map(([k, v]) => [k, fill(v)]))).toString()}`;
}

/** Where the read goes: the base URL plus the API's base path, or the base URL's origin. */
export function balanceUrl(spec: BalanceSpec, baseUrl: string, basePath = ''): string {
  const root = spec.from === 'origin' ? new URL(baseUrl).origin : `${baseUrl}${basePath}`;
  return `${root}${spec.path}${balanceQuery(spec)}`;
}

function at(value: unknown, path: string): unknown {
  if (!path) return value;
  let cur = value;
  for (const part of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

function numberAt(value: unknown, path: string): number | undefined {
  const v = at(value, path);
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(v) ? Number(v) : NaN;
  return Number.isFinite(n) ? n : undefined;
}

/** Rounds away binary noise (49.58894 stays 49.58894, 74.75000000001 becomes 74.75). */
const tidy = (n: number) => Math.round(n * 1e6) / 1e6;

/** The amounts a balance answer holds; a malformed answer (an amount missing or not a number) is an UpstreamFailure. */
export function readBalance(spec: BalanceSpec, answer: Record<string, unknown>): BalanceAmount[] {
  const out: BalanceAmount[] = [];
  const malformed = (what: string) => new UpstreamFailure('malformed', `the balance answer has no ${what}`, 200);
  for (const a of spec.amounts) {
    const unitOf = (scope: unknown) => a.unit ?? (a.unit_path ? String(at(scope, a.unit_path) ?? '') : '');
    const amountOf = (scope: unknown): number => {
      const n = numberAt(scope, a.path);
      if (n === undefined) throw malformed(`number at ${a.items ? `${a.items}[].` : ''}${a.path}`);
      if (!a.minus) return n;
      const m = numberAt(scope, a.minus);
      if (m === undefined) throw malformed(`number at ${a.minus}`);
      return n - m;
    };
    if (!a.items) {
      out.push({ label: a.label, amount: tidy(amountOf(answer)), unit: unitOf(answer) });
      continue;
    }
    const list = at(answer, a.items);
    if (!Array.isArray(list)) throw malformed(`list at ${a.items}`);
    const chosen = list.filter((item) => Object.entries(a.where ?? {}).every(([field, allowed]) => allowed.includes(String(at(item, field)))));
    if (a.sum) {
      // Items of one unit are summed; an empty list is a balance of 0.
      const units = new Map<string, number>();
      for (const item of chosen) units.set(unitOf(item), (units.get(unitOf(item)) ?? 0) + amountOf(item));
      if (!units.size) units.set(a.unit ?? '', 0);
      for (const [unit, amount] of units) out.push({ label: a.label, amount: tidy(amount), unit });
    } else {
      for (const item of chosen) out.push({ label: a.label, amount: tidy(amountOf(item)), unit: unitOf(item) });
    }
  }
  return out;
}

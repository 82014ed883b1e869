// Usage numbers come from providers and go into charges and ledger rows (PostgreSQL bigint, micro-
// dollars as exact integers). A provider bug or a hostile channel can send anything: 1e30, -5,
// "123", NaN. Every count is checked here where it enters.

/** More units than any single request or video could use (a 10 s 1080p video is ~0.5 M tokens). */
export const MAX_REPORTED_UNITS = 1e12;

/** A provider's usage count as a whole number, or null when it is not a believable count. */
export function usageCount(v: unknown): number | null {
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || v > MAX_REPORTED_UNITS) return null;
  return Math.floor(v);
}

/**
 * A reported count for billing: null stays null (not reported); a count that is not believable
 * becomes `fallback` (what the request was admitted with), so a bad number bills the estimate
 * instead of a fortune, nothing, or a row the database refuses.
 */
export function believableCount(v: number | null | undefined, fallback: number): number | null {
  if (v === null || v === undefined) return null;
  return usageCount(v) ?? fallback;
}

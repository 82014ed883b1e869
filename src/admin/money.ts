// Money in the admin API and CLI: decimal USD strings in, integer micro-dollars stored.

/** The largest amount one request may set or move: a billion dollars keeps every sum of micro-dollars exact in a double. */
export const MAX_USD = 1_000_000_000;

const AMOUNT = /^([+-]?)(\d{1,10})(?:\.(\d{1,6}))?$/;

/**
 * `"+10"`, `"-2.5"`, `"3"` → micro-dollars; null when the text is no such amount or is beyond
 * MAX_USD. With `signRequired`, an amount without `+` or `-` is refused too.
 */
export function parseSignedUsd(text: string, signRequired = false): number | null {
  const m = AMOUNT.exec(text.trim());
  if (!m || (signRequired && !m[1])) return null;
  const micros = Number(m[2]) * 1_000_000 + Number((m[3] ?? '').padEnd(6, '0'));
  if (micros > MAX_USD * 1_000_000) return null;
  return m[1] === '-' ? -micros : micros;
}

/** Micro-dollars as a decimal USD string with six places (exact; no float rounding). */
export function usd(micros: number): string {
  const sign = micros < 0 ? '-' : '';
  const m = Math.abs(Math.round(micros));
  return `${sign}${Math.floor(m / 1_000_000)}.${String(m % 1_000_000).padStart(6, '0')}`;
}

// Money in the admin API and CLI: decimal USD strings in, integer micro-dollars stored.

const SIGNED_USD = /^[+-]?\d{1,12}(\.\d{1,6})?$/;

/** `"+10"`, `"-2.5"`, `"3"` → micro-dollars; null when the text is no such amount. */
export function parseSignedUsd(text: string): number | null {
  const t = text.trim();
  if (!SIGNED_USD.test(t)) return null;
  const negative = t.startsWith('-');
  const [whole, frac = ''] = t.replace(/^[+-]/, '').split('.');
  const micros = Number(whole) * 1_000_000 + Number(frac.padEnd(6, '0'));
  return negative ? -micros : micros;
}

/** Micro-dollars as a decimal USD string with six places (exact; no float rounding). */
export function usd(micros: number): string {
  const sign = micros < 0 ? '-' : '';
  const m = Math.abs(Math.round(micros));
  return `${sign}${Math.floor(m / 1_000_000)}.${String(m % 1_000_000).padStart(6, '0')}`;
}

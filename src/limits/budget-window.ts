// Budget windows are calendar periods in one time zone (UTC by default): a day from midnight to
// midnight, a week from Monday 00:00, a month from the 1st 00:00. Computed with Intl only, so
// daylight-saving days are 23 or 25 hours long, as the wall clock says.

export const BUDGET_PERIODS = ['day', 'week', 'month'] as const;
export type BudgetPeriod = (typeof BUDGET_PERIODS)[number];

export interface BudgetWindow {
  /** Inclusive start and exclusive end, ms since the epoch. */
  start: number;
  end: number;
}

/** Whether `zone` is an IANA time zone name this runtime knows. */
export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

const formats = new Map<string, Intl.DateTimeFormat>();

/** The wall-clock fields of `ms` in `zone`. */
function wallClock(ms: number, zone: string): { y: number; m: number; d: number; h: number; min: number; s: number } {
  let f = formats.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone: zone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' });
    formats.set(zone, f);
  }
  const parts: Record<string, number> = {};
  for (const p of f.formatToParts(ms)) if (p.type !== 'literal') parts[p.type] = Number(p.value);
  return { y: parts.year, m: parts.month, d: parts.day, h: parts.hour, min: parts.minute, s: parts.second };
}

/** The zone's offset from UTC at `ms`, in ms (positive east of Greenwich). */
function offsetAt(ms: number, zone: string): number {
  const w = wallClock(ms, zone);
  return Date.UTC(w.y, w.m - 1, w.d, w.h, w.min, w.s) - Math.floor(ms / 1000) * 1000;
}

/** The instant a wall-clock midnight (y, m, d) happens in `zone` (the first such instant). */
function midnight(y: number, m: number, d: number, zone: string): number {
  const local = Date.UTC(y, m - 1, d);
  // The offset just before and after can differ (a DST change that day): try both, keep the one that is midnight.
  let guess = local - offsetAt(local, zone);
  const again = local - offsetAt(guess, zone);
  if (again !== guess) guess = Math.min(guess, again);
  return guess;
}

/** The window of `period` that contains `now` in `zone`. */
export function budgetWindow(period: BudgetPeriod, now: number, zone = 'UTC'): BudgetWindow {
  const w = wallClock(now, zone);
  // Calendar arithmetic on a UTC date (no zone involved), then each edge placed in the zone.
  const day = new Date(Date.UTC(w.y, w.m - 1, w.d));
  let from: Date;
  let to: Date;
  if (period === 'day') {
    from = day;
    to = new Date(Date.UTC(w.y, w.m - 1, w.d + 1));
  } else if (period === 'week') {
    const sinceMonday = (day.getUTCDay() + 6) % 7;
    from = new Date(Date.UTC(w.y, w.m - 1, w.d - sinceMonday));
    to = new Date(Date.UTC(w.y, w.m - 1, w.d - sinceMonday + 7));
  } else {
    from = new Date(Date.UTC(w.y, w.m - 1, 1));
    to = new Date(Date.UTC(w.y, w.m, 1));
  }
  const at = (d: Date) => midnight(d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate(), zone);
  return { start: at(from), end: at(to) };
}

/** RFC 3339 in UTC, whole seconds. */
export function rfc3339(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

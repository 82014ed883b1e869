import type { Config } from '../config/schema.js';
import { BUDGET_PERIODS, budgetWindow, rfc3339, type BudgetPeriod } from '../limits/budget-window.js';
import type { ReservationsRepo } from '../store/repos/reservations.js';
import { adminErrors } from './errors.js';
import { parseSignedUsd, usd } from './money.js';

// The budget fields keys and projects share in the admin API and CLI: `budget_usd` per
// `budget_period`, and what the current window has spent and holds.

export interface BudgetView {
  budget_usd: string | null;
  budget_period: BudgetPeriod | null;
  /** Charged in the current window. */
  budget_spent_usd: string | null;
  /** Held by requests and tasks still running in the current window. */
  budget_held_usd: string | null;
  /** When the current window ends (RFC 3339, UTC). */
  budget_resets_at: string | null;
}

/** What the budget columns of a row become after an input: undefined fields leave them as they are. */
export function budgetPatch(
  input: { budget_usd?: unknown; budget_period?: unknown },
  current: { budget_micros: number | null; budget_period: string | null } | null,
): { budget_micros?: number | null; budget_period?: string | null } {
  const out: { budget_micros?: number | null; budget_period?: string | null } = {};
  if (input.budget_usd !== undefined) {
    if (input.budget_usd === null || input.budget_usd === '' || input.budget_usd === 'none') out.budget_micros = null;
    else {
      const text = typeof input.budget_usd === 'number' && Number.isFinite(input.budget_usd) ? String(input.budget_usd) : input.budget_usd;
      const micros = typeof text === 'string' ? parseSignedUsd(text) : null;
      if (micros === null || micros < 0 || (typeof text === 'string' && text.trim().startsWith('+'))) throw adminErrors.invalid('budget_usd must be a non-negative amount of USD, e.g. "25" or "2.50" (null or "none" removes the budget)');
      out.budget_micros = micros;
    }
  }
  if (input.budget_period !== undefined) {
    if (input.budget_period === null) out.budget_period = null;
    else if (typeof input.budget_period !== 'string' || !(BUDGET_PERIODS as readonly string[]).includes(input.budget_period)) {
      throw adminErrors.invalid(`budget_period must be one of: ${BUDGET_PERIODS.join(', ')}`);
    } else out.budget_period = input.budget_period;
  }
  const micros = out.budget_micros !== undefined ? out.budget_micros : (current?.budget_micros ?? null);
  const period = out.budget_period !== undefined ? out.budget_period : (current?.budget_period ?? null);
  if (micros !== null && period === null) throw adminErrors.invalid(`a budget needs budget_period (one of: ${BUDGET_PERIODS.join(', ')})`);
  // A period without an amount is no budget: it goes with its amount.
  if (micros === null && out.budget_micros === null) out.budget_period = null;
  return out;
}

/** The budget views of rows (scope → columns), reading every current window in one query. */
export async function budgetViews(
  config: Config,
  reservations: ReservationsRepo,
  rows: { scope: string; budget_micros: number | null; budget_period: string | null }[],
  now = Date.now(),
): Promise<Map<string, BudgetView>> {
  const zone = config.limits.budget_time_zone;
  const windows = new Map<string, { start: number; end: number }>();
  for (const r of rows) if (r.budget_micros !== null && r.budget_period) windows.set(r.scope, budgetWindow(r.budget_period as BudgetPeriod, now, zone));
  const spent = await reservations.windowsAt([...windows].map(([scope, w]) => ({ scope, start: w.start })));
  const out = new Map<string, BudgetView>();
  for (const r of rows) {
    const w = windows.get(r.scope);
    const s = spent.get(r.scope);
    out.set(
      r.scope,
      w
        ? { budget_usd: usd(Number(r.budget_micros)), budget_period: r.budget_period as BudgetPeriod, budget_spent_usd: usd(s?.spentMicros ?? 0), budget_held_usd: usd(s?.heldMicros ?? 0), budget_resets_at: rfc3339(w.end) }
        : { budget_usd: null, budget_period: null, budget_spent_usd: null, budget_held_usd: null, budget_resets_at: null },
    );
  }
  return out;
}

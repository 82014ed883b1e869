import type { BudgetRule, Principal } from '../auth/principal.js';
import { GatewayError } from '../http/errors.js';
import type { BudgetCharge } from '../store/repos/reservations.js';
import { budgetWindow, rfc3339, type BudgetWindow } from './budget-window.js';
import { formatUsd } from './credit-refusal.js';

/** What every price the caller pays is multiplied by (its project's price_ratio; 1 without one). */
export function priceRatioOf(p: Pick<Principal, 'priceRatio'>): number {
  const r = p.priceRatio;
  return r !== undefined && Number.isFinite(r) && r >= 0 ? r : 1;
}

/** The windows `now` falls in, one per budget of the caller. */
export function budgetCharges(rules: readonly BudgetRule[], now: number, zone: string): BudgetCharge[] {
  return rules.map((r) => {
    const w = windowOf(r.period, now, zone);
    return { scope: r.scope, kind: r.kind, name: r.name, period: r.period, start: w.start, end: w.end, limitMicros: r.limitMicros };
  });
}

// The window of each period and zone last computed: Intl's calendar arithmetic is worth skipping
// on every request of a budgeted key, and a window stays the same until its end.
const windows = new Map<string, BudgetWindow>();

function windowOf(period: BudgetRule['period'], now: number, zone: string): BudgetWindow {
  const name = `${period} ${zone}`;
  const known = windows.get(name);
  if (known && known.start <= now && now < known.end) return known;
  const w = budgetWindow(period, now, zone);
  windows.set(name, w);
  return w;
}

/**
 * 402 budget_exceeded: 402 rather than 429 because waiting seconds does not help (SDKs retry 429
 * on their own) and the answer changes only when the window resets or the operator raises the budget.
 */
export function budgetRefusal(b: BudgetCharge, usedMicros: number, neededMicros: number): GatewayError {
  const whose = b.kind === 'key' ? 'This key' : `The project "${b.name}" of this key`;
  const reset = rfc3339(b.end);
  const alone = neededMicros > b.limitMicros ? ' This request alone needs more than the whole budget.' : '';
  return new GatewayError(
    402,
    'budget_exceeded',
    `${whose} has a ${b.period} budget of ${formatUsd(b.limitMicros)}; ${formatUsd(usedMicros)} of it is spent or held in this window and this request needs ${formatUsd(neededMicros)} held.${alone} The budget resets at ${reset}; the operator may also raise it.`,
    { 'x-budget-reset': reset },
  );
}

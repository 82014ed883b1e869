import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../schema.js';
import { randomBase62 } from '../../ids.js';
import { GroupCommit } from '../group-commit.js';
import { retryWhileUnavailable } from '../unavailable.js';

/** `chargedMicros` is the real cost; `overageMicros` the part of it neither hold nor balance covered (now owed). */
export type CloseResult = { closed: true; keyId: string; chargedMicros: number; overageMicros: number } | { closed: false };

/** One budget window a hold counts against, as the hold was admitted. */
export interface BudgetCharge {
  scope: string;
  kind: 'key' | 'project';
  name: string;
  period: string;
  start: number;
  end: number;
  limitMicros: number;
}

/** A reserve's outcome: the reservation, or what was short (for a budget: which, and what it had used). */
export type ReserveResult = { id: string } | { short: 'credit' } | { short: 'budget'; budget: BudgetCharge; usedMicros: number };

/** Where budget threshold alerts go; thresholds are percentages of the budget, one bit each in `alerted`. */
export interface BudgetAlerts {
  url: string;
  thresholds: number[];
}

/** A key's money: what it may spend, what it owes; null balance = unlimited; undefined = no such key. */
export interface KeyAccount {
  balanceMicros: number | null;
  overageMicros: number;
}

/**
 * Balance movements. Every change of a key's balance is one guarded UPDATE inside a transaction,
 * so concurrent requests can never take the balance below zero, and a reservation moves from
 * `held` to `settled` or `released` exactly once.
 */
export class ReservationsRepo {
  private readonly transact: <T>(work: (trx: Transaction<Database>) => Promise<T>) => Promise<T>;

  /** `groupCommit`: batch concurrent balance moves into shared transactions (SQLite; see GroupCommit). */
  /** `groupCommit`: batch concurrent balance moves into shared transactions (SQLite; see GroupCommit). `alerts`: where budget threshold events go. */
  constructor(
    private readonly db: Kysely<Database>,
    opts: { groupCommit?: boolean; alerts?: BudgetAlerts | null | (() => BudgetAlerts | null) } = {},
  ) {
    const group = opts.groupCommit ? new GroupCommit(db) : null;
    this.transact = group ? (work) => group.run(work) : (work) => db.transaction().execute(work);
    const alerts = opts.alerts ?? null;
    this.alerts = typeof alerts === 'function' ? alerts : () => alerts;
  }

  /** Read at each settle: a config reload may change where alerts go. */
  private readonly alerts: () => BudgetAlerts | null;

  /** Takes `amount` from the key's balance and holds it. Returns the reservation id, or null when the balance is short. */
  async reserve(keyId: string, amountMicros: number, now = Date.now()): Promise<string | null> {
    const r = await this.reserveWithin(keyId, amountMicros, { limitedCredit: true, budgets: [] }, now);
    return 'id' in r ? r.id : null;
  }

  /**
   * Holds `amount` against the key's balance (when `limitedCredit`) and against every budget
   * window, all or nothing, in one transaction. Each is one guarded UPDATE (`spent + held + amount
   * <= limit`, `credit >= amount`), so concurrent holds on any number of instances never take a
   * budget or a balance past its limit. Budget windows are always locked before the key's row, in
   * scope order, here and in close(), so two transactions never wait on each other in a circle.
   */
  async reserveWithin(keyId: string, amountMicros: number, on: { limitedCredit: boolean; budgets: BudgetCharge[] }, now = Date.now()): Promise<ReserveResult> {
    const amount = Math.max(0, Math.ceil(amountMicros));
    const budgets = [...on.budgets].sort((a, b) => (a.scope < b.scope ? -1 : 1));
    return this.transact(async (trx): Promise<ReserveResult> => {
      // Work in a shared (group-commit) transaction must not throw to undo itself: what a later
      // check refuses is given back by hand.
      const undo = (upTo: number) => Promise.all(budgets.slice(0, upTo).map((b) => moveHeld(trx, b, -amount)));
      for (let i = 0; i < budgets.length; i++) {
        const b = budgets[i];
        await trx
          .insertInto('budget_windows')
          .values({ scope: b.scope, window_start: b.start, window_end: b.end, limit_micros: b.limitMicros })
          .onConflict((oc) => oc.columns(['scope', 'window_start']).doNothing())
          .execute();
        const took = await trx
          .updateTable('budget_windows')
          .set({ held_micros: sql`held_micros + ${amount}`, limit_micros: b.limitMicros })
          .where('scope', '=', b.scope)
          .where('window_start', '=', b.start)
          .where(sql<boolean>`spent_micros + held_micros + ${amount} <= ${b.limitMicros}`)
          .executeTakeFirst();
        if (Number(took.numUpdatedRows) !== 1) {
          await undo(i);
          const row = await trx.selectFrom('budget_windows').select(['spent_micros', 'held_micros']).where('scope', '=', b.scope).where('window_start', '=', b.start).executeTakeFirst();
          const spent = Number(row?.spent_micros ?? 0);
          const held = Number(row?.held_micros ?? 0);
          await this.alertRefused(trx, keyId, b, spent, held, amount, now);
          return { short: 'budget', budget: b, usedMicros: spent + held };
        }
      }
      if (on.limitedCredit) {
        const taken = await trx
          .updateTable('api_keys')
          .set({ credit_micros: sql`credit_micros - ${amount}` })
          .where('id', '=', keyId)
          .where('credit_micros', '>=', amount)
          // A key that owes (an earlier real cost beyond hold and balance) is refused until topped up.
          .where('overage_micros', '=', 0)
          .executeTakeFirst();
        if (Number(taken.numUpdatedRows) !== 1) {
          await undo(budgets.length);
          return { short: 'credit' };
        }
      }
      const id = `res_${randomBase62(20)}`;
      await trx
        .insertInto('reservations')
        .values({ id, key_id: keyId, amount_micros: amount, state: 'held', charged_micros: 0, created_at: now, closed_at: null, budget: budgets.length ? JSON.stringify(budgets) : null })
        .execute();
      return { id };
    });
  }

  /**
   * Closes a held reservation charging `charge`: the difference to the held amount goes back to
   * the key, or an overage is taken from what the balance still has (never below zero). Returns
   * what was really charged; `closed: false` when the reservation was already closed.
   */
  settle(reservationId: string, chargeMicros: number, now = Date.now()): Promise<CloseResult> {
    // NaN (an unknown cost) charges the held amount; see close().
    const charge = Number.isNaN(chargeMicros) ? NaN : Math.min(Number.MAX_SAFE_INTEGER, Math.max(0, Math.ceil(chargeMicros)));
    return this.close(reservationId, 'settled', charge, now);
  }

  /**
   * Held reservations older than `cutoff` that no video task refers to: holds of chat or image
   * requests whose process died before settling. A task's hold is the poller's to close.
   */
  async abandoned(cutoff: number, limit = 100): Promise<string[]> {
    const rows = await this.db
      .selectFrom('reservations')
      .select('id')
      // A literal, so both databases can use the partial index of held reservations (0009b).
      .where('state', '=', sql.lit('held'))
      .where('created_at', '<', cutoff)
      .where(({ not, exists, selectFrom }) => not(exists(selectFrom('tasks').select('task_id').whereRef('tasks.reservation_id', '=', 'reservations.id'))))
      // An image request's hold kept for its provider tasks is closed by the image-wait worker.
      .where(({ not, exists, selectFrom }) => not(exists(selectFrom('image_waits').select('id').whereRef('image_waits.reservation_id', '=', 'reservations.id'))))
      .limit(limit)
      .execute();
    return rows.map((r) => r.id);
  }

  /** Returns the whole held amount to the key. */
  release(reservationId: string, now = Date.now()): Promise<CloseResult> {
    return this.close(reservationId, 'released', 0, now);
  }

  private close(reservationId: string, state: 'settled' | 'released', charge: number, now: number): Promise<CloseResult> {
    // Guarded by `state = 'held'`, so a repeat after a dropped connection cannot close it twice.
    return retryWhileUnavailable(() => this.closeOnce(reservationId, state, charge, now));
  }

  private async closeOnce(reservationId: string, state: 'settled' | 'released', charge: number, now: number): Promise<CloseResult> {
    return this.transact(async (trx): Promise<CloseResult> => {
      // Claim the transition first: the guarded UPDATE lets exactly one closer through, and every
      // closer locks the reservation row before the key row, so two closers never deadlock.
      const res = await trx
        .updateTable('reservations')
        // Charged up to the held amount here; an overage is added below once taken from the balance.
        .set({ state, closed_at: now, charged_micros: Number.isNaN(charge) ? sql<number>`amount_micros` : sql<number>`CASE WHEN amount_micros < ${charge} THEN amount_micros ELSE ${charge} END` })
        .where('id', '=', reservationId)
        .where('state', '=', 'held')
        .returning(['key_id', 'amount_micros', 'budget'])
        .executeTakeFirst();
      if (!res) return { closed: false };
      const amount = Number(res.amount_micros);
      if (Number.isNaN(charge)) charge = amount;
      // Budget windows before the key's row (the lock order of reserveWithin).
      if (res.budget) await this.closeBudgets(trx, res.key_id, JSON.parse(res.budget) as BudgetCharge[], amount, charge, now);
      let overage = 0;
      if (charge > amount) {
        overage = await chargeBeyondHold(trx, res.key_id, charge - amount);
        await trx.updateTable('reservations').set({ charged_micros: charge }).where('id', '=', reservationId).execute();
      }
      const refund = amount - Math.min(charge, amount);
      if (refund > 0) await creditBack(trx, res.key_id, refund);
      return { closed: true, keyId: res.key_id, chargedMicros: charge, overageMicros: overage };
    });
  }

  /** The hold leaves its windows; what it charged counts as spent there, and thresholds it crossed are sent once. */
  private async closeBudgets(trx: Transaction<Database>, keyId: string, budgets: BudgetCharge[], amount: number, charge: number, now: number): Promise<void> {
    for (const b of budgets) {
      const row = await trx
        .updateTable('budget_windows')
        .set({ held_micros: sql`held_micros - ${amount}`, spent_micros: sql`spent_micros + ${charge}` })
        .where('scope', '=', b.scope)
        .where('window_start', '=', b.start)
        .returning(['spent_micros', 'limit_micros', 'alerted'])
        .executeTakeFirst();
      const alerts = this.alerts();
      if (!row || !alerts || charge <= 0) continue;
      const spent = Number(row.spent_micros);
      const limit = Number(row.limit_micros);
      const alerted = Number(row.alerted);
      let bits = 0;
      const crossed: number[] = [];
      alerts.thresholds.forEach((t, i) => {
        if (!(alerted & (1 << i)) && limit > 0 && spent * 100 >= limit * t) {
          bits |= 1 << i;
          crossed.push(t);
        }
      });
      if (!bits) continue;
      // The row is locked by the UPDATE above until commit: no other closer reads the old bits.
      await trx.updateTable('budget_windows').set({ alerted: alerted | bits }).where('scope', '=', b.scope).where('window_start', '=', b.start).execute();
      for (const t of crossed) {
        const id = `msg_${randomBase62(24)}`;
        const payload = budgetEvent(b, keyId, t, spent, limit, now);
        await trx
          .insertInto('webhook_outbox')
          .values({ id, task_id: '', key_id: keyId, url: alerts.url, event: BUDGET_EVENT, payload, state: 'pending', attempts: 0, next_attempt_at: now, lease_owner: null, lease_until: 0, last_status: 0, last_error: '', created_at: now, delivered_at: 0 })
          .execute();
      }
    }
  }

  /**
   * A request refused by a budget: the window's 100 % alert (when the thresholds have one and it
   * was not sent in this window) goes out now, since the budget has stopped admitting requests
   * even where settled spend has not reached it (holds count first). The guarded UPDATE claims
   * the bit, so of several instances refusing at once exactly one queues the event.
   */
  private async alertRefused(trx: Transaction<Database>, keyId: string, b: BudgetCharge, spent: number, held: number, amount: number, now: number): Promise<void> {
    const alerts = this.alerts();
    const i = alerts ? alerts.thresholds.indexOf(100) : -1;
    // A budget of 0 refuses everything by design: no alert for that.
    if (!alerts || i < 0 || b.limitMicros <= 0) return;
    const bit = 1 << i;
    const claimed = await trx
      .updateTable('budget_windows')
      .set({ alerted: sql`alerted + ${bit}` })
      .where('scope', '=', b.scope)
      .where('window_start', '=', b.start)
      .where(sql<boolean>`(alerted & ${bit}) = 0`)
      .executeTakeFirst();
    if (Number(claimed.numUpdatedRows) !== 1) return;
    const payload = budgetEvent(b, keyId, 100, spent, b.limitMicros, now, { trigger: 'refused', held, requested: amount });
    await trx
      .insertInto('webhook_outbox')
      .values({ id: `msg_${randomBase62(24)}`, task_id: '', key_id: keyId, url: alerts.url, event: BUDGET_EVENT, payload, state: 'pending', attempts: 0, next_attempt_at: now, lease_owner: null, lease_until: 0, last_status: 0, last_error: '', created_at: now, delivered_at: 0 })
      .execute();
  }

  /** What the budget windows of `scopes` hold at `at`: spent and held, by scope. */
  async windowsAt(scopes: { scope: string; start: number }[]): Promise<Map<string, { spentMicros: number; heldMicros: number }>> {
    const out = new Map<string, { spentMicros: number; heldMicros: number }>();
    if (!scopes.length) return out;
    const rows = await this.db
      .selectFrom('budget_windows')
      .select(['scope', 'window_start', 'spent_micros', 'held_micros'])
      .where((eb) => eb.or(scopes.map((s) => eb.and([eb('scope', '=', s.scope), eb('window_start', '=', s.start)]))))
      .execute();
    for (const r of rows) out.set(r.scope, { spentMicros: Number(r.spent_micros), heldMicros: Number(r.held_micros) });
    return out;
  }

  /** The price ratio of the key's project (1 without one). */
  async priceRatio(keyId: string): Promise<number> {
    const row = await this.db.selectFrom('api_keys').leftJoin('projects', 'projects.id', 'api_keys.project_id').select('projects.price_ratio').where('api_keys.id', '=', keyId).executeTakeFirst();
    const r = row?.price_ratio;
    return r === null || r === undefined ? 1 : Number(r);
  }

  /**
   * Charges a key without a hold (a video task that succeeded after its hold was released): from
   * the balance as far as it goes, the rest owed. Returns the owed part; 0 for unlimited keys.
   */
  charge(keyId: string, amountMicros: number, budgets: BudgetCharge[] = [], now = Date.now()): Promise<number> {
    const amount = Math.min(Number.MAX_SAFE_INTEGER, Math.max(0, Math.ceil(amountMicros)));
    return this.transact(async (trx) => {
      // Spent in the budget windows of now (no room is asked: the money is spent already), before the key's row.
      for (const b of [...budgets].sort((x, y) => (x.scope < y.scope ? -1 : 1))) {
        await trx
          .insertInto('budget_windows')
          .values({ scope: b.scope, window_start: b.start, window_end: b.end, limit_micros: b.limitMicros })
          .onConflict((oc) => oc.columns(['scope', 'window_start']).doNothing())
          .execute();
      }
      if (budgets.length) await this.closeBudgets(trx, keyId, budgets, 0, amount, now);
      return chargeBeyondHold(trx, keyId, amount);
    });
  }

  /** The key's budget and its project's, with what the ratio of prices is (for a charge that has no principal at hand). */
  async termsOf(keyId: string): Promise<{ ratio: number; budgets: { scope: string; kind: 'key' | 'project'; name: string; limitMicros: number; period: string }[] }> {
    const row = await this.db
      .selectFrom('api_keys')
      .leftJoin('projects', 'projects.id', 'api_keys.project_id')
      .select(['api_keys.name', 'api_keys.budget_micros', 'api_keys.budget_period', 'api_keys.project_id', 'projects.name as project_name', 'projects.price_ratio', 'projects.budget_micros as project_budget', 'projects.budget_period as project_period'])
      .where('api_keys.id', '=', keyId)
      .executeTakeFirst();
    const budgets: { scope: string; kind: 'key' | 'project'; name: string; limitMicros: number; period: string }[] = [];
    if (!row) return { ratio: 1, budgets };
    if (row.budget_micros !== null && row.budget_period) budgets.push({ scope: `key:${keyId}`, kind: 'key', name: row.name, limitMicros: Number(row.budget_micros), period: row.budget_period });
    if (row.project_id && row.project_budget !== null && row.project_period) {
      budgets.push({ scope: `project:${row.project_id}`, kind: 'project', name: row.project_name ?? '', limitMicros: Number(row.project_budget), period: row.project_period });
    }
    return { ratio: row.price_ratio === null ? 1 : Number(row.price_ratio), budgets };
  }

  async balance(keyId: string): Promise<number | null | undefined> {
    return (await this.account(keyId))?.balanceMicros;
  }

  async account(keyId: string): Promise<KeyAccount | undefined> {
    const row = await this.db.selectFrom('api_keys').select(['credit_micros', 'overage_micros']).where('id', '=', keyId).executeTakeFirst();
    if (!row) return undefined;
    return { balanceMicros: row.credit_micros === null ? null : Number(row.credit_micros), overageMicros: Number(row.overage_micros) };
  }

  /**
   * Adds to (or, negative, takes from) a limited key's balance; false when the key is unknown or
   * unlimited, or when a deduction is larger than the balance (a balance never goes below zero).
   * A top-up pays what the key owes first; the rest becomes balance.
   */
  async topUp(keyId: string, amountMicros: number): Promise<boolean> {
    const amount = Math.round(amountMicros);
    if (amount > 0) return creditBack(this.db, keyId, amount);
    const r = await this.db.updateTable('api_keys').set({ credit_micros: sql`credit_micros + ${amount}` }).where('id', '=', keyId).where('credit_micros', 'is not', null).where('credit_micros', '>=', -amount).executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  heldCount(keyId: string): Promise<number> {
    return this.db
      .selectFrom('reservations')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('key_id', '=', keyId)
      .where('state', '=', 'held')
      .executeTakeFirstOrThrow()
      .then((r) => Number(r.n));
  }
}

/**
 * Money coming back to a limited key (a hold's unspent part, a lease returned, a top-up): it pays
 * what the key owes first and only the rest becomes balance, in one guarded UPDATE, so a key never
 * has a balance while it owes. False when the key is unknown or unlimited.
 */
export async function creditBack(db: Kysely<Database> | Transaction<Database>, keyId: string, amount: number): Promise<boolean> {
  const r = await db
    .updateTable('api_keys')
    .set({
      // Both right-hand sides see the row as it was (SQL evaluates SET from the old values).
      credit_micros: sql`credit_micros + CASE WHEN overage_micros >= ${amount} THEN 0 ELSE ${amount} - overage_micros END`,
      overage_micros: sql`CASE WHEN overage_micros >= ${amount} THEN overage_micros - ${amount} ELSE 0 END`,
    })
    .where('id', '=', keyId)
    .where('credit_micros', 'is not', null)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/**
 * Charges `extra` beyond a hold: from the balance as far as it goes, the rest is recorded as the
 * key's overage (owed; the key is refused until credit coming back pays it). Returns the owed part.
 */
export async function chargeBeyondHold(trx: Transaction<Database>, keyId: string, extra: number): Promise<number> {
  if (extra <= 0) return 0;
  // A no-op UPDATE reads the balance under the row's write lock on both databases (SQLite has no
  // SELECT … FOR UPDATE), so the split below cannot race another move of this key.
  const row = await trx
    .updateTable('api_keys')
    .set({ overage_micros: sql`overage_micros` })
    .where('id', '=', keyId)
    .where('credit_micros', 'is not', null)
    .returning('credit_micros')
    .executeTakeFirst();
  if (!row) return 0;
  const take = Math.min(Number(row.credit_micros), extra);
  const owed = extra - take;
  await trx
    .updateTable('api_keys')
    .set({ credit_micros: sql`credit_micros - ${take}`, overage_micros: sql`overage_micros + ${owed}` })
    .where('id', '=', keyId)
    .execute();
  return owed;
}

/** The Standard Webhooks event type of a budget alert. */
export const BUDGET_EVENT = 'budget.threshold';

function moveHeld(trx: Transaction<Database>, b: BudgetCharge, delta: number) {
  return trx.updateTable('budget_windows').set({ held_micros: sql`held_micros + ${delta}` }).where('scope', '=', b.scope).where('window_start', '=', b.start).execute();
}

/**
 * The body of one `budget.threshold` delivery (Standard Webhooks: type, timestamp, data).
 * `trigger`: `spent` when a settle took the spend past the threshold, `refused` when the budget
 * refused a request (the 100 % alert; then with what was held and what the request needed).
 */
function budgetEvent(b: BudgetCharge, keyId: string, threshold: number, spent: number, limit: number, now: number, refused?: { trigger: 'refused'; held: number; requested: number }): string {
  const iso = (ms: number) => new Date(ms).toISOString();
  const usd = (micros: number) => micros / 1_000_000;
  return JSON.stringify({
    type: BUDGET_EVENT,
    timestamp: iso(now),
    data: {
      scope: b.kind,
      name: b.name,
      ...(b.kind === 'project' ? { project_id: b.scope.slice('project:'.length) } : {}),
      key_id: keyId,
      period: b.period,
      threshold_percent: threshold,
      trigger: refused ? 'refused' : 'spent',
      budget_usd: usd(limit),
      spent_usd: usd(spent),
      ...(refused ? { held_usd: usd(refused.held), requested_usd: usd(refused.requested) } : {}),
      window_start: iso(b.start),
      resets_at: iso(b.end),
    },
  });
}

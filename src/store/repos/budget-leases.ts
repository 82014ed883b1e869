import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../schema.js';
import { moveWindow, type BudgetAlerts, type BudgetCharge } from './reservations.js';

/**
 * Budget leases: part of a budget window's room moved into one instance's keeping, so it can admit
 * holds against the budget in memory (src/limits/budget-lease.ts). A lease's amount is counted in
 * the window's `held_micros`, so the window's spent + held never passes its limit, whoever admits.
 * Every transaction locks the window row before the lease row (the order of reservations).
 */
export class BudgetLeasesRepo {
  private readonly alerts: () => BudgetAlerts | null;

  /** `background`: the store's `withoutLockWait`, for writes that can simply be tried again later. */
  constructor(
    private readonly db: Kysely<Database>,
    opts: { alerts?: BudgetAlerts | null | (() => BudgetAlerts | null) } = {},
    private readonly background: <T>(work: (db: Kysely<Database>) => Promise<T>) => Promise<T> = (work) => work(db),
  ) {
    const alerts = opts.alerts ?? null;
    this.alerts = typeof alerts === 'function' ? alerts : () => alerts;
  }

  /**
   * Takes `want(room)` (at least `need`) of the window's room into the lease, in one transaction: the
   * room is read under the window row's lock and taken by a guarded UPDATE (`spent + held + x <=
   * limit`). Takes nothing when `want(room)` is more than the room or less than `need`. Returns what
   * was drawn and the room there was.
   */
  async draw(leaseId: string, b: BudgetCharge, instance: string, want: (room: number) => number, need: number, ttlMs: number, now = Date.now()): Promise<{ drawn: number; room: number }> {
    return this.db.transaction().execute(async (trx) => {
      await trx
        .insertInto('budget_windows')
        .values({ scope: b.scope, window_start: b.start, window_end: b.end, limit_micros: b.limitMicros })
        .onConflict((oc) => oc.columns(['scope', 'window_start']).doNothing())
        .execute();
      // Locks the row and records the budget as last set (what alerts measure against).
      const row = await trx
        .updateTable('budget_windows')
        .set({ limit_micros: b.limitMicros })
        .where('scope', '=', b.scope)
        .where('window_start', '=', b.start)
        .returning(['spent_micros', 'held_micros'])
        .executeTakeFirstOrThrow();
      const room = b.limitMicros - Number(row.spent_micros) - Number(row.held_micros);
      const x = want(room);
      if (x > room || x < need || x <= 0) return { drawn: 0, room };
      const took = await trx
        .updateTable('budget_windows')
        .set({ held_micros: sql`held_micros + ${x}` })
        .where('scope', '=', b.scope)
        .where('window_start', '=', b.start)
        .where(sql<boolean>`spent_micros + held_micros + ${x} <= ${b.limitMicros}`)
        .executeTakeFirst();
      if (Number(took.numUpdatedRows) !== 1) return { drawn: 0, room };
      await trx
        .insertInto('budget_leases')
        .values({ id: leaseId, scope: b.scope, window_start: b.start, instance, amount_micros: x, expires_at: now + ttlMs })
        .onConflict((oc) => oc.column('id').doUpdateSet({ amount_micros: sql`budget_leases.amount_micros + ${x}`, expires_at: now + ttlMs }))
        .execute();
      return { drawn: x, room: room - x };
    });
  }

  /**
   * Reports settles and renews the lease: `used` of the lease's amount was spent or is given back
   * with `give`, and the window's spend grows by `spent` (which may exceed `used`: a cost above its
   * hold). A lease found gone (expired and returned by a sweep) only adds the spend. `close` ends the
   * lease, returning what is left in it. `keyId` names the key in threshold alerts.
   */
  async writeBack(leaseId: string, b: BudgetCharge, m: { used: number; give: number; spent: number; keyId: string }, ttlMs: number, close: boolean, now = Date.now(), background = false): Promise<{ lost: boolean }> {
    const run = (db: Kysely<Database>) =>
      db.transaction().execute(async (trx) => {
        await lockWindow(trx, b);
        const taken = m.used + m.give;
        const r = await trx
          .updateTable('budget_leases')
          .set({ amount_micros: sql`amount_micros - ${taken}`, expires_at: now + ttlMs })
          .where('id', '=', leaseId)
          .where('amount_micros', '>=', taken)
          .executeTakeFirst();
        const lost = Number(r.numUpdatedRows) !== 1;
        let back = lost ? 0 : taken;
        if (close && !lost) {
          const rest = await trx.deleteFrom('budget_leases').where('id', '=', leaseId).returning('amount_micros').executeTakeFirst();
          back += Number(rest?.amount_micros ?? 0);
        }
        if (back > 0 || m.spent > 0) await moveWindow(trx, b, -back, m.spent, m.keyId, now, this.alerts());
        return { lost };
      });
    return background ? this.background(run) : run(this.db);
  }

  /** Returns leases that expired more than `graceMs` ago to their windows. Safe on every instance at once. */
  async sweepExpired(graceMs: number, now = Date.now(), background = false): Promise<number> {
    const expired = await this.db.selectFrom('budget_leases').select(['id', 'scope', 'window_start']).where('expires_at', '<', now - graceMs).limit(100).execute();
    let returned = 0;
    for (const lease of expired) {
      const work = (db: Kysely<Database>) =>
        db.transaction().execute(async (trx) => {
          const b = { scope: lease.scope, start: Number(lease.window_start) };
          await lockWindow(trx, b);
          // Guarded by the expiry again: a lease renewed since the select stays.
          const gone = await trx.deleteFrom('budget_leases').where('id', '=', lease.id).where('expires_at', '<', now - graceMs).returning('amount_micros').executeTakeFirst();
          if (!gone) return;
          returned++;
          await trx.updateTable('budget_windows').set({ held_micros: sql`held_micros - ${Number(gone.amount_micros)}` }).where('scope', '=', b.scope).where('window_start', '=', b.start).execute();
        });
      await (background ? this.background(work) : work(this.db));
    }
    return returned;
  }

  /** What the window's leases hold, all instances (tests, views). */
  async leased(scope: string, start: number): Promise<number> {
    const r = await this.db.selectFrom('budget_leases').select((eb) => eb.fn.sum<number>('amount_micros').as('n')).where('scope', '=', scope).where('window_start', '=', start).executeTakeFirst();
    return Number(r?.n ?? 0);
  }
}

/** Locks a window's row (a no-op UPDATE: SQLite has no SELECT … FOR UPDATE) before any lease row. */
function lockWindow(trx: Transaction<Database>, b: { scope: string; start: number }) {
  return trx.updateTable('budget_windows').set({ held_micros: sql`held_micros` }).where('scope', '=', b.scope).where('window_start', '=', b.start).execute();
}

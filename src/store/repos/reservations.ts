import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../schema.js';
import { randomBase62 } from '../../auth/keys.js';
import { GroupCommit } from '../group-commit.js';
import { retryWhileUnavailable } from '../unavailable.js';

export type CloseResult = { closed: true; chargedMicros: number } | { closed: false };

/**
 * Balance movements. Every change of a key's balance is one guarded UPDATE inside a transaction,
 * so concurrent requests can never take the balance below zero, and a reservation moves from
 * `held` to `settled` or `released` exactly once.
 */
export class ReservationsRepo {
  private readonly transact: <T>(work: (trx: Transaction<Database>) => Promise<T>) => Promise<T>;

  /** `groupCommit`: batch concurrent balance moves into shared transactions (SQLite; see GroupCommit). */
  constructor(
    private readonly db: Kysely<Database>,
    opts: { groupCommit?: boolean } = {},
  ) {
    const group = opts.groupCommit ? new GroupCommit(db) : null;
    this.transact = group ? (work) => group.run(work) : (work) => db.transaction().execute(work);
  }

  /** Takes `amount` from the key's balance and holds it. Returns the reservation id, or null when the balance is short. */
  async reserve(keyId: string, amountMicros: number, now = Date.now()): Promise<string | null> {
    const amount = Math.max(0, Math.ceil(amountMicros));
    return this.transact(async (trx) => {
      const taken = await trx
        .updateTable('api_keys')
        .set({ credit_micros: sql`credit_micros - ${amount}` })
        .where('id', '=', keyId)
        .where('credit_micros', '>=', amount)
        .executeTakeFirst();
      if (Number(taken.numUpdatedRows) !== 1) return null;
      const id = `res_${randomBase62(20)}`;
      await trx
        .insertInto('reservations')
        .values({ id, key_id: keyId, amount_micros: amount, state: 'held', charged_micros: 0, created_at: now, closed_at: null })
        .execute();
      return id;
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
      .where('state', '=', 'held')
      .where('created_at', '<', cutoff)
      .where(({ not, exists, selectFrom }) => not(exists(selectFrom('tasks').select('task_id').whereRef('tasks.reservation_id', '=', 'reservations.id'))))
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
        .returning(['key_id', 'amount_micros'])
        .executeTakeFirst();
      if (!res) return { closed: false };
      const amount = Number(res.amount_micros);
      if (Number.isNaN(charge)) charge = amount;
      let charged = Math.min(charge, amount);
      if (charge > amount) {
        charged += await takeUpTo(trx, res.key_id, charge - amount);
        await trx.updateTable('reservations').set({ charged_micros: charged }).where('id', '=', reservationId).execute();
      }
      const refund = amount - Math.min(charged, amount);
      if (refund > 0) {
        await trx.updateTable('api_keys').set({ credit_micros: sql`credit_micros + ${refund}` }).where('id', '=', res.key_id).where('credit_micros', 'is not', null).execute();
      }
      return { closed: true, chargedMicros: charged };
    });
  }

  async balance(keyId: string): Promise<number | null | undefined> {
    const row = await this.db.selectFrom('api_keys').select('credit_micros').where('id', '=', keyId).executeTakeFirst();
    return row ? (row.credit_micros === null ? null : Number(row.credit_micros)) : undefined;
  }

  /**
   * Adds to (or, negative, takes from) a limited key's balance; false when the key is unknown or
   * unlimited, or when a deduction is larger than the balance (a balance never goes below zero).
   */
  async topUp(keyId: string, amountMicros: number): Promise<boolean> {
    const amount = Math.round(amountMicros);
    let q = this.db
      .updateTable('api_keys')
      .set({ credit_micros: sql`credit_micros + ${amount}` })
      .where('id', '=', keyId)
      .where('credit_micros', 'is not', null);
    if (amount < 0) q = q.where('credit_micros', '>=', -amount);
    const r = await q.executeTakeFirst();
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

/** Takes as much of `want` as the balance holds, without going below zero; returns what it took. */
async function takeUpTo(trx: Transaction<Database>, keyId: string, want: number): Promise<number> {
  let ask = want;
  for (let i = 0; i < 5 && ask > 0; i++) {
    const r = await trx
      .updateTable('api_keys')
      .set({ credit_micros: sql`credit_micros - ${ask}` })
      .where('id', '=', keyId)
      .where('credit_micros', '>=', ask)
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) === 1) return ask;
    const row = await trx.selectFrom('api_keys').select('credit_micros').where('id', '=', keyId).executeTakeFirst();
    if (!row || row.credit_micros === null) return 0;
    ask = Math.min(ask, Number(row.credit_micros));
  }
  return 0;
}

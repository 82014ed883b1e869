import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../schema.js';
import { randomBase62 } from '../../ids.js';
import { GroupCommit } from '../group-commit.js';
import { retryWhileUnavailable } from '../unavailable.js';

/** `chargedMicros` is the real cost; `overageMicros` the part of it neither hold nor balance covered (now owed). */
export type CloseResult = { closed: true; keyId: string; chargedMicros: number; overageMicros: number } | { closed: false };

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
        // A key that owes (an earlier real cost beyond hold and balance) is refused until topped up.
        .where('overage_micros', '=', 0)
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
        .returning(['key_id', 'amount_micros'])
        .executeTakeFirst();
      if (!res) return { closed: false };
      const amount = Number(res.amount_micros);
      if (Number.isNaN(charge)) charge = amount;
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

  /**
   * Charges a key without a hold (a video task that succeeded after its hold was released): from
   * the balance as far as it goes, the rest owed. Returns the owed part; 0 for unlimited keys.
   */
  charge(keyId: string, amountMicros: number): Promise<number> {
    const amount = Math.min(Number.MAX_SAFE_INTEGER, Math.max(0, Math.ceil(amountMicros)));
    return this.transact((trx) => chargeBeyondHold(trx, keyId, amount));
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

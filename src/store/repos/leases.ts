import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../schema.js';
import { chargeBeyondHold, creditBack } from './reservations.js';

/**
 * Credit leases: part of a key's balance moved into one instance's keeping, so that instance can
 * reserve and settle in memory (src/limits/credit-lease.ts). A lease row holds what the instance
 * has drawn and not yet reported spent; the key's spendable money is always its balance plus the
 * amounts of its lease rows. A row whose instance stops renewing it goes back to the balance once
 * it expired (sweepExpired), so a crashed instance's unspent lease is never lost.
 */
export class LeasesRepo {
  /**
   * `background` runs the writes that can simply be tried again later (the periodic write-back and
   * the sweep): the store's `withoutLockWait` in the gateway, so on SQLite they never wait for a
   * write lock another process holds on the event loop (they fail at once and run again next time).
   */
  constructor(
    private readonly db: Kysely<Database>,
    private readonly background: <T>(work: (db: Kysely<Database>) => Promise<T>) => Promise<T> = (work) => work(db),
  ) {}

  /**
   * Draws up to `want` (at least `need`) from the key's balance into the lease `leaseId`, in one
   * transaction: the balance is read under the row's write lock, then taken by one guarded UPDATE
   * (`credit >= x` and nothing owed), so no draw ever takes more than the stored balance. Returns
   * what was drawn (0: the balance is short or the key owes) and the balance left.
   */
  async draw(leaseId: string, keyId: string, instance: string, want: (balance: number) => number, need: number, ttlMs: number, now = Date.now()): Promise<{ drawn: number; balance: number; overage: number }> {
    return this.db.transaction().execute(async (trx) => {
      const row = await lockKey(trx, keyId);
      if (!row || row.credit_micros === null) return { drawn: 0, balance: 0, overage: 0 };
      const balance = Number(row.credit_micros);
      const overage = Number(row.overage_micros);
      const x = Math.min(balance, Math.max(need, want(balance)));
      if (overage > 0 || x < need || x <= 0) return { drawn: 0, balance, overage };
      const taken = await trx
        .updateTable('api_keys')
        .set({ credit_micros: sql`credit_micros - ${x}` })
        .where('id', '=', keyId)
        .where('credit_micros', '>=', x)
        .where('overage_micros', '=', 0)
        .executeTakeFirst();
      if (Number(taken.numUpdatedRows) !== 1) return { drawn: 0, balance, overage };
      await trx
        .insertInto('credit_leases')
        .values({ id: leaseId, key_id: keyId, instance, amount_micros: x, expires_at: now + ttlMs })
        .onConflict((oc) => oc.column('id').doUpdateSet({ amount_micros: sql`credit_leases.amount_micros + ${x}`, expires_at: now + ttlMs }))
        .execute();
      return { drawn: x, balance: balance - x, overage };
    });
  }

  /**
   * Reports `spent` (settled charges) and gives `give` back to the key (what it owes first, then
   * the balance), and renews the lease.
   * When the lease row is gone (it expired and another instance returned it to the balance), the
   * spent amount is charged to the balance directly: as far as it goes, the rest owed. `close`
   * deletes the row after giving everything back (shutdown, idle key). Returns the key's overage.
   */
  async writeBack(leaseId: string, keyId: string, spent: number, give: number, ttlMs: number, close: boolean, now = Date.now(), background = false): Promise<{ overage: number; lost: boolean }> {
    const run = (db: Kysely<Database>) => db.transaction().execute(async (trx) => {
      let lost = false;
      const taken = spent + give;
      const r = await trx
        .updateTable('credit_leases')
        .set({ amount_micros: sql`amount_micros - ${taken}`, expires_at: now + ttlMs })
        .where('id', '=', leaseId)
        .where('amount_micros', '>=', taken)
        .executeTakeFirst();
      if (Number(r.numUpdatedRows) !== 1) {
        lost = true;
        await chargeBeyondHold(trx, keyId, spent);
      } else if (give > 0) {
        await creditBack(trx, keyId, give);
      }
      if (close && !lost) {
        // What is left in the row (nothing, when the caller gave back all it had) returns too.
        const rest = await trx.deleteFrom('credit_leases').where('id', '=', leaseId).returning('amount_micros').executeTakeFirst();
        if (rest && Number(rest.amount_micros) > 0) await creditBack(trx, keyId, Number(rest.amount_micros));
      }
      const key = await trx.selectFrom('api_keys').select('overage_micros').where('id', '=', keyId).executeTakeFirst();
      return { overage: Number(key?.overage_micros ?? 0), lost };
    });
    return background ? this.background(run) : run(this.db);
  }

  /**
   * Charges a real cost beyond what the lease could cover: from the balance as far as it goes, the
   * rest owed. Returns the owed part.
   */
  chargeBeyondLease(keyId: string, extra: number): Promise<number> {
    return this.db.transaction().execute((trx) => chargeBeyondHold(trx, keyId, extra));
  }

  /** Returns leases that expired more than `graceMs` ago to their keys' balances. Safe on every instance at once. */
  async sweepExpired(graceMs: number, now = Date.now(), background = false): Promise<number> {
    const expired = await this.db.selectFrom('credit_leases').select(['id', 'key_id']).where('expires_at', '<', now - graceMs).limit(100).execute();
    let returned = 0;
    for (const lease of expired) {
      const write = (work: (db: Kysely<Database>) => Promise<void>) => (background ? this.background(work) : work(this.db));
      await write((db) => db.transaction().execute(async (trx) => {
        // Guarded by the expiry again: a lease renewed since the select stays.
        const gone = await trx.deleteFrom('credit_leases').where('id', '=', lease.id).where('expires_at', '<', now - graceMs).returning('amount_micros').executeTakeFirst();
        if (!gone) return;
        returned++;
        await creditBack(trx, lease.key_id, Number(gone.amount_micros));
      }));
    }
    return returned;
  }

  /** What the keys' leases hold, per key (the given keys, or every key with a lease). */
  async leasedByKey(keyIds?: string | string[]): Promise<Map<string, number>> {
    let q = this.db.selectFrom('credit_leases').select((eb) => ['key_id', eb.fn.sum<number>('amount_micros').as('leased')]).groupBy('key_id');
    if (typeof keyIds === 'string') q = q.where('key_id', '=', keyIds);
    else if (keyIds) {
      if (!keyIds.length) return new Map();
      q = q.where('key_id', 'in', keyIds);
    }
    const rows = await q.execute();
    return new Map(rows.map((r) => [r.key_id, Number(r.leased ?? 0)]));
  }
}

/** Reads a key's balance under its row's write lock (a no-op UPDATE: SQLite has no SELECT … FOR UPDATE). */
async function lockKey(trx: Transaction<Database>, keyId: string) {
  return trx.updateTable('api_keys').set({ overage_micros: sql`overage_micros` }).where('id', '=', keyId).returning(['credit_micros', 'overage_micros']).executeTakeFirst();
}

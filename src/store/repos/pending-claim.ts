import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import type { Dialect } from '../db.js';

/** Work tables whose rows wait in state `pending` until `next_attempt_at`, claimed with a lease. */
type WorkTable = 'task_archives' | 'webhook_outbox' | 'image_waits';
const KEY: Record<WorkTable, 'task_id' | 'id'> = { task_archives: 'task_id', webhook_outbox: 'id', image_waits: 'id' };

/**
 * Claims up to `limit` due pending rows whose lease ran out for `owner`, in one atomic step:
 * PostgreSQL selects them FOR UPDATE SKIP LOCKED and leases them in one transaction (two instances
 * never wait on or share a row); SQLite runs one UPDATE … WHERE key IN (SELECT … LIMIT n) RETURNING,
 * after a read that skips the write when nothing is due.
 */
export async function claimPending<T>(db: Kysely<Database>, dialect: Dialect, table: WorkTable, owner: string, now: number, leaseUntil: number, limit: number): Promise<T[]> {
  const key = KEY[table];
  const anyDb = db as unknown as Kysely<any>;
  const due = (q: Kysely<any>) =>
    q.selectFrom(table).select(key).where('state', '=', 'pending').where('next_attempt_at', '<=', now).where('lease_until', '<=', now).orderBy('next_attempt_at').limit(limit);
  const set = { lease_owner: owner, lease_until: leaseUntil };
  if (dialect === 'postgres') {
    return anyDb.transaction().execute(async (trx) => {
      const ids = (await due(trx).forUpdate().skipLocked().execute()).map((r: Record<string, string>) => r[key]);
      if (!ids.length) return [];
      return (await trx.updateTable(table).set(set).where(key, 'in', ids).returningAll().execute()) as T[];
    });
  }
  if (!(await due(anyDb).executeTakeFirst())) return [];
  return (await anyDb.updateTable(table).set(set).where(key, 'in', due(anyDb)).returningAll().execute()) as T[];
}

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { freshDatabaseUrl, testDialect } from './helpers/databases.js';
import { openStore, type Store } from '../src/store/db.js';
import { KeysRepo } from '../src/store/repos/keys.js';
import { UsageRepo } from '../src/store/repos/usage.js';

// On a SQLite file the usage ledger's batches are written by a worker thread on a connection of its
// own: a second writer in the process. A transaction of the gateway's connection that has read
// (and so holds a snapshot) must still be able to write: SQLite refuses the write outright
// (SQLITE_BUSY_SNAPSHOT, no busy wait) when another connection committed since the snapshot, so
// a batch must never commit while such a transaction is open.
describe.skipIf(testDialect() !== 'sqlite')('SQLite background batches and the gateway\'s own transactions', () => {
  let db: Awaited<ReturnType<typeof freshDatabaseUrl>>;
  let store: Store;

  beforeEach(async () => {
    db = await freshDatabaseUrl();
    store = await openStore(db.url);
  });
  afterEach(async () => {
    await store.close();
    await db.drop();
  });

  it('a batch posted while a transaction is open commits after it, and the transaction\'s write succeeds', async () => {
    const keys = new KeysRepo(store.db);
    const key = await keys.create({ name: 't', keyHash: 'h-snap', keyPrefix: 'mg-x', creditMicros: 1000 });
    const usage = new UsageRepo(store.db, store.withoutLockWait, store.writeBatch);
    const row = { key_id: key.id, model: 'm', channel: 'c', endpoint: 'chat', status: 200, input_units: 1, output_units: 1, cost_micros: 5, latency_ms: 1, created_at: 1 };
    let batch: Promise<void> | undefined;
    await store.db.transaction().execute(async (trx) => {
      const before = await trx.selectFrom('api_keys').select('credit_micros').where('id', '=', key.id).executeTakeFirstOrThrow();
      batch = usage.insertMany([row]);
      // Time enough for the worker to commit, were it free to.
      await new Promise((r) => setTimeout(r, 300));
      await trx.updateTable('api_keys').set({ credit_micros: Number(before.credit_micros) - 5 }).where('id', '=', key.id).execute();
    });
    await batch;
    const after = await store.db.selectFrom('api_keys').select('credit_micros').where('id', '=', key.id).executeTakeFirstOrThrow();
    expect(Number(after.credit_micros)).toBe(995);
    expect((await usage.totals({ keyId: key.id })).map((t) => [t.requests, t.cost_micros])).toEqual([[1, 5]]);
  });
});

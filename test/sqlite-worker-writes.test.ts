import { existsSync, statSync } from 'node:fs';
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

  // busy_timeout 0: a write of the gateway's connection that met a batch being written would fail.
  it('a write outside any transaction waits for the batch being written instead of failing', async () => {
    await store.close();
    store = await openStore(db.url, { timeouts: { busy_timeout_ms: 0 } });
    const keys = new KeysRepo(store.db);
    const key = await keys.create({ name: 't', keyHash: 'h-auto', keyPrefix: 'mg-x', creditMicros: null });
    const usage = new UsageRepo(store.db, store.withoutLockWait, store.writeBatch);
    const rows = Array.from({ length: 100_000 }, (_, i) => ({ key_id: key.id, model: 'm', channel: 'c', endpoint: 'chat', status: 200, input_units: i, output_units: 1, cost_micros: 1, latency_ms: 1, created_at: i }));
    const batch = usage.insertMany(rows);
    // The batch is far larger than the page cache: the worker spills pages to the WAL file while
    // its transaction is open, so a WAL that grew says the worker holds the write lock (or is done).
    const wal = `${db.url.slice('sqlite:'.length)}-wal`;
    const size = () => (existsSync(wal) ? statSync(wal).size : 0);
    const before = size();
    for (let i = 0; i < 5000 && size() === before; i++) await new Promise((r) => setTimeout(r, 2));
    const second = keys.create({ name: 't2', keyHash: 'h-auto-2', keyPrefix: 'mg-y', creditMicros: null });
    await expect(second).resolves.toMatchObject({ name: 't2' });
    await batch;
    expect((await usage.totals({ keyId: key.id }))[0].requests).toBe(100_000);
  });
});

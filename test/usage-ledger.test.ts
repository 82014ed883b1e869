import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import BetterSqlite from 'better-sqlite3';
import { sql } from 'kysely';
import { freshDatabaseUrl, testDialect } from './helpers/databases.js';
import { openStore, type Store } from '../src/store/db.js';
import { KeysRepo } from '../src/store/repos/keys.js';
import { ReservationsRepo } from '../src/store/repos/reservations.js';
import { UsageRepo } from '../src/store/repos/usage.js';
import { UsageLedger } from '../src/limits/ledger.js';
import { CreditService } from '../src/limits/credit.js';
import { GatewayError } from '../src/http/errors.js';
import type { Principal } from '../src/auth/principal.js';
import { seededRandom } from './helpers/prng.js';

describe('usage ledger', () => {
  let db: Awaited<ReturnType<typeof freshDatabaseUrl>>;
  let store: Store;
  let usage: UsageRepo;
  let reservations: ReservationsRepo;
  let credit: CreditService;
  const errors: unknown[] = [];

  beforeEach(async () => {
    db = await freshDatabaseUrl();
    store = await openStore(db.url);
    usage = new UsageRepo(store.db);
    reservations = new ReservationsRepo(store.db);
    credit = new CreditService(reservations);
    errors.length = 0;
  });
  afterEach(async () => {
    await store.close();
    await db.drop();
  });

  async function keyWith(creditMicros: number | null): Promise<Principal> {
    const row = await new KeysRepo(store.db).create({ name: 't', keyHash: `h${Math.random()}`, keyPrefix: 'mg-x', creditMicros });
    return { keyId: row.id, name: 't', models: null, rpm: 0, concurrency: 0, limitedCredit: creditMicros !== null };
  }

  it('totals what was settled: ledger cost = sum of settled charges = what left the balances', async () => {
    // Small batches and a short timer, so the run crosses many batch boundaries.
    const ledger = new UsageLedger(usage, (e) => errors.push(e), 5, 7);
    const random = seededRandom(42);
    const start = 200_000;
    const keys = [await keyWith(start), await keyWith(start), await keyWith(null)];
    const models = ['sim-chat', 'sim-image', 'sim-video'];
    const expected = new Map<string, { requests: number; cost: number; input: number; output: number }>();

    // 150 requests in parallel: reserve an estimate, then settle a real cost (sometimes over the
    // estimate), or release on an upstream failure, or get refused for want of credit.
    await Promise.all(
      Array.from({ length: 150 }, async (_, i) => {
        const p = keys[i % keys.length];
        const model = models[Math.floor(random() * models.length)];
        const estimate = 1000 + Math.floor(random() * 9000);
        const actual = Math.floor(estimate * (0.2 + random()));
        const fails = random() < 0.2;
        const input = Math.floor(random() * 5000);
        const output = Math.floor(random() * 2000);
        const began = Date.now();
        let status = 200;
        let cost = 0;
        let overage = 0;
        try {
          const hold = await credit.reserve(p, estimate);
          if (fails) {
            status = 502;
            expect(await credit.release(hold)).toBe(true);
          } else {
            const settled = await credit.settle(hold, actual);
            expect(settled).not.toBeNull();
            cost = settled!.chargedMicros;
            overage = settled!.overageMicros;
          }
        } catch (err) {
          if (!(err instanceof GatewayError) || err.code !== 'insufficient_quota') throw err;
          status = 403;
        }
        const ok = status === 200;
        ledger.record({
          key_id: p.keyId,
          model,
          channel: 'simulator',
          endpoint: 'chat',
          status,
          input_units: ok ? input : 0,
          output_units: ok ? output : 0,
          cost_micros: cost,
          overage_micros: overage,
          latency_ms: Date.now() - began,
        });
        const k = `${p.keyId}/${model}`;
        const e = expected.get(k) ?? { requests: 0, cost: 0, input: 0, output: 0 };
        expected.set(k, { requests: e.requests + 1, cost: e.cost + cost, input: e.input + (ok ? input : 0), output: e.output + (ok ? output : 0) });
      }),
    );
    await ledger.close();
    expect(errors).toEqual([]);

    const totals = await usage.totals();
    expect(totals.reduce((n, t) => n + t.requests, 0)).toBe(150);
    for (const t of totals) {
      expect(expected.get(`${t.key_id}/${t.model}`)).toEqual({ requests: t.requests, cost: t.cost_micros, input: t.input_units, output: t.output_units });
    }
    expect(totals).toHaveLength(expected.size);

    // Per limited key: ledger cost = the reservations' settled charges = start − balance + owed. The
    // ledger's overage is what each settle left owed; holds released later pay it off first, so the
    // key owes at most that, and never while it has a balance.
    for (const p of keys.slice(0, 2)) {
      const ledgerCost = (await usage.totals({ keyId: p.keyId })).reduce((n, t) => n + t.cost_micros, 0);
      const ledgerOwed = (await usage.totals({ keyId: p.keyId })).reduce((n, t) => n + t.overage_micros, 0);
      const settled = await store.db
        .selectFrom('reservations')
        .select(['state', 'charged_micros'])
        .where('key_id', '=', p.keyId)
        .execute();
      expect(settled.every((r) => r.state !== 'held')).toBe(true);
      const charges = settled.filter((r) => r.state === 'settled').reduce((n, r) => n + Number(r.charged_micros), 0);
      expect(ledgerCost).toBeGreaterThan(0);
      expect(ledgerCost).toBe(charges);
      const account = (await reservations.account(p.keyId))!;
      expect(account.overageMicros).toBeLessThanOrEqual(ledgerOwed);
      expect(account.balanceMicros! > 0 && account.overageMicros > 0).toBe(false);
      expect(account.balanceMicros! - account.overageMicros).toBe(start - charges);
    }
  });

  it('writes off the request path: record() returns at once and close() writes what is buffered', async () => {
    const ledger = new UsageLedger(usage, (e) => errors.push(e), 60_000, 1000);
    const p = await keyWith(null);
    for (let i = 0; i < 3; i++) {
      ledger.record({ key_id: p.keyId, model: 'm', channel: 'c', endpoint: 'chat', status: 200, input_units: 1, output_units: 2, cost_micros: 10, latency_ms: 5 });
    }
    expect(await usage.totals()).toEqual([]);
    await ledger.close();
    expect(await usage.totals()).toEqual([{ key_id: p.keyId, model: 'm', requests: 3, input_units: 3, output_units: 6, cost_micros: 30, overage_micros: 0 }]);
  });

  it('stores rows with fractional or missing numbers and NUL bytes instead of failing their batch', async () => {
    const ledger = new UsageLedger(usage, (e) => errors.push(e));
    const p = await keyWith(null);
    const base = { key_id: p.keyId, channel: 'c', endpoint: 'chat', status: 200, latency_ms: 1 };
    ledger.record({ ...base, model: 'm', input_units: 1.6, output_units: NaN, cost_micros: 2.4 });
    ledger.record({ ...base, model: 'm\u0000', input_units: 1, output_units: 1, cost_micros: 1, latency_ms: 12.7 });
    await ledger.close();
    expect(errors).toEqual([]);
    expect(await usage.totals({ keyId: p.keyId })).toEqual([{ key_id: p.keyId, model: 'm', requests: 2, input_units: 3, output_units: 1, cost_micros: 3, overage_micros: 0 }]);
  });

  it('clamps out-of-range numbers and cuts long texts instead of failing their batch', async () => {
    const ledger = new UsageLedger(usage, (e) => errors.push(e));
    const p = await keyWith(null);
    const base = { key_id: p.keyId, channel: 'c', endpoint: 'chat', status: 200, latency_ms: 1 };
    ledger.record({ ...base, model: 'x'.repeat(300), input_units: -5, output_units: -0, cost_micros: 2 ** 60, latency_ms: Infinity });
    ledger.record({ ...base, model: 'y\u0000'.repeat(200), input_units: 7, output_units: 0.5, cost_micros: 1, status: -1 });
    await ledger.close();
    expect(errors).toEqual([]);
    const rows = await store.db.selectFrom('usage').selectAll().where('key_id', '=', p.keyId).orderBy('id').execute();
    expect(rows.map((r) => [r.model, Number(r.status), Number(r.input_units), Number(r.output_units), Number(r.cost_micros), Number(r.latency_ms)])).toEqual([
      ['x'.repeat(256), 200, 0, 0, Number.MAX_SAFE_INTEGER, 0],
      ['y'.repeat(200), 0, 7, 1, 1, 1],
    ]);
  });

  it('filters totals by key and by time', async () => {
    const ledger = new UsageLedger(usage, (e) => errors.push(e));
    const a = await keyWith(null);
    const b = await keyWith(null);
    const base = { model: 'm', channel: 'c', endpoint: 'chat', status: 200, input_units: 0, output_units: 0, latency_ms: 1 };
    ledger.record({ ...base, key_id: a.keyId, cost_micros: 1, created_at: Date.parse('2026-01-01T00:00:00Z') });
    ledger.record({ ...base, key_id: a.keyId, cost_micros: 2, created_at: Date.parse('2026-02-01T00:00:00Z') });
    ledger.record({ ...base, key_id: b.keyId, cost_micros: 4, created_at: Date.parse('2026-02-01T00:00:00Z') });
    await ledger.close();
    expect((await usage.totals({ keyId: a.keyId })).map((t) => t.cost_micros)).toEqual([3]);
    const since = await usage.totals({ sinceMs: Date.parse('2026-01-15T00:00:00Z') });
    expect(since.map((t) => [t.key_id, t.cost_micros]).sort()).toEqual([[a.keyId, 2], [b.keyId, 4]].sort());
  });

  // A batch is written as a few statements compiled once (100, 10 and 1 rows): every row lands
  // with its own values, and a batch with one bad row writes none of it (so the ledger's retry
  // row by row does not write any row twice).
  it('writes a batch of any size with each row intact, all or nothing', async () => {
    const k = await keyWith(null);
    const rows = Array.from({ length: 237 }, (_, i) => ({
      key_id: k.keyId, model: `m${i % 7}`, channel: `c${i}`, endpoint: 'chat', status: 200 + (i % 3),
      input_units: i, output_units: 2 * i, cost_micros: 3 * i, overage_micros: i % 2 ? i : undefined, latency_ms: i % 50, created_at: 1_700_000_000_000 + i,
    }));
    await usage.insertMany(rows);
    const stored = await store.db.selectFrom('usage').selectAll().where('key_id', '=', k.keyId).orderBy('created_at').execute();
    expect(stored.map((r) => [r.channel, Number(r.status), Number(r.input_units), Number(r.output_units), Number(r.cost_micros), Number(r.overage_micros), Number(r.latency_ms)])).toEqual(
      rows.map((r, i) => [`c${i}`, 200 + (i % 3), i, 2 * i, 3 * i, i % 2 ? i : 0, i % 50]),
    );
    const bad = rows.slice(0, 120).map((r, i) => ({ ...r, channel: 'batch-2', key_id: i === 115 ? (null as unknown as string) : r.key_id }));
    await expect(usage.insertMany(bad)).rejects.toThrow();
    expect(await store.db.selectFrom('usage').select('id').where('channel', '=', 'batch-2').execute()).toEqual([]);
  });
});

/**
 * A fresh database and a store on it for each test of the block, with a 60 s busy timeout: a
 * write that waited for a lock would outlast the test's own timeout.
 */
function freshStoreEach(): { db: Awaited<ReturnType<typeof freshDatabaseUrl>>; store: Store } {
  const fresh = {} as { db: Awaited<ReturnType<typeof freshDatabaseUrl>>; store: Store };
  beforeEach(async () => {
    fresh.db = await freshDatabaseUrl();
    fresh.store = await openStore(fresh.db.url, { timeouts: { busy_timeout_ms: 60_000 } });
  });
  afterEach(async () => {
    await fresh.store.close();
    await fresh.db.drop();
  });
  return fresh;
}

// better-sqlite3 waits for a lock synchronously: a ledger batch that waited for a write lock
// another process holds would stand the whole gateway still for database.busy_timeout_ms (and again
// on every retry). The ledger's writes never wait: they fail at once, the rows stay buffered and
// are written exactly once when the lock is gone. The busy timeout here is 60 s, so a write that
// waited would outlast the test's own timeout.
describe.skipIf(testDialect() !== 'sqlite')('usage ledger on a SQLite file whose write lock another process holds', () => {
  const fresh = freshStoreEach();

  it('keeps the rows without waiting for the lock, then writes each exactly once', async () => {
    const { db, store } = fresh;
    const errors: unknown[] = [];
    const usage = new UsageRepo(store.db, store.withoutLockWait);
    const ledger = new UsageLedger(usage, (e) => errors.push(e), 60_000, 1000);
    const keyId = (await new KeysRepo(store.db).create({ name: 't', keyHash: 'h-lock', keyPrefix: 'mg-x', creditMicros: null })).id;
    const row = (i: number) => ({ key_id: keyId, model: 'm', channel: 'c', endpoint: 'chat', status: 503, input_units: 0, output_units: 0, cost_micros: i, latency_ms: 1 });

    const other = new BetterSqlite(db.url.slice('sqlite:'.length));
    other.exec('BEGIN IMMEDIATE');
    try {
      // 1 row and 130 rows (one statement, and a transaction of several): both meet the lock.
      ledger.record(row(1));
      await ledger.flush();
      for (let i = 2; i <= 131; i++) ledger.record(row(i));
      await ledger.flush();
      expect(errors).toEqual([]);
      expect(await usage.totals()).toEqual([]);
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    // The store's own writes still wait for a lock as configured: the no-wait was the ledger's alone.
    expect(await sql<{ timeout: number }>`pragma busy_timeout`.execute(store.db).then((r) => r.rows[0].timeout)).toBe(60_000);

    await ledger.close();
    expect(errors).toEqual([]);
    const stored = await store.db.selectFrom('usage').select('cost_micros').where('key_id', '=', keyId).execute();
    expect(stored.map((r) => Number(r.cost_micros)).sort((a, b) => a - b)).toEqual(Array.from({ length: 131 }, (_, i) => i + 1));
  });
});

// The gateway's ledger writes through the store's writeBatch: on a SQLite file in the background
// worker thread (its own connection), elsewhere on the store's connection. Same guarantees either way.
describe('usage ledger through the store\'s background batches', () => {
  const fresh = freshStoreEach();

  it('writes every row with its values once flush() resolves, and one bad row loses only itself', async () => {
    const { store } = fresh;
    const errors: unknown[] = [];
    const usage = new UsageRepo(store.db, store.withoutLockWait, store.writeBatch);
    const ledger = new UsageLedger(usage, (e) => errors.push(e), 60_000, 1000);
    const keyId = (await new KeysRepo(store.db).create({ name: 't', keyHash: 'h-bg', keyPrefix: 'mg-x', creditMicros: null })).id;
    for (let i = 0; i < 237; i++) {
      ledger.record({ key_id: keyId, model: `m${i % 7}`, channel: `c${i}`, endpoint: 'chat', status: 200 + (i % 3), input_units: i, output_units: 2 * i, cost_micros: 3 * i, overage_micros: i % 2 ? i : undefined, latency_ms: i % 50, created_at: 1_700_000_000_000 + i });
    }
    await ledger.flush();
    expect(errors).toEqual([]);
    const stored = await store.db.selectFrom('usage').selectAll().where('key_id', '=', keyId).orderBy('created_at').execute();
    expect(stored.map((r) => [r.model, r.channel, Number(r.status), Number(r.input_units), Number(r.output_units), Number(r.cost_micros), Number(r.overage_micros), Number(r.latency_ms)])).toEqual(
      Array.from({ length: 237 }, (_, i) => [`m${i % 7}`, `c${i}`, 200 + (i % 3), i, 2 * i, 3 * i, i % 2 ? i : 0, i % 50]),
    );

    // A batch of 12 with one row the database refuses: the other 11 land, the bad one is reported.
    const bad = new UsageRepo(store.db, store.withoutLockWait, (batch) =>
      store.writeBatch(batch.map((s) => ({ sql: s.sql, parameters: s.parameters.map((v) => (v === 'refuse-me' ? null : v)) }))),
    );
    const ledger2 = new UsageLedger(bad, (e) => errors.push(e), 60_000, 1000);
    for (let i = 0; i < 12; i++) ledger2.record({ key_id: keyId, model: 'm', channel: i === 5 ? 'refuse-me' : 'batch-2', endpoint: 'chat', status: 200, input_units: 0, output_units: 0, cost_micros: i, latency_ms: 1 });
    await ledger2.close();
    expect(errors).toHaveLength(1);
    const second = await store.db.selectFrom('usage').select('cost_micros').where('channel', '=', 'batch-2').execute();
    expect(second.map((r) => Number(r.cost_micros)).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 6, 7, 8, 9, 10, 11]);
  });

  // The worker may wait for a write lock another process holds, since only it waits: the event
  // loop keeps running meanwhile, and the rows land once the lock is gone, exactly once.
  it.skipIf(testDialect() !== 'sqlite')('waits for another process\'s write lock off the event loop, then writes each row once', async () => {
    const { db, store } = fresh;
    const errors: unknown[] = [];
    const usage = new UsageRepo(store.db, store.withoutLockWait, store.writeBatch);
    const ledger = new UsageLedger(usage, (e) => errors.push(e), 60_000, 1000);
    const keyId = (await new KeysRepo(store.db).create({ name: 't', keyHash: 'h-bg-lock', keyPrefix: 'mg-x', creditMicros: null })).id;
    const other = new BetterSqlite(db.url.slice('sqlite:'.length));
    other.exec('BEGIN IMMEDIATE');
    let written = false;
    let flushed: Promise<void>;
    try {
      for (let i = 1; i <= 131; i++) ledger.record({ key_id: keyId, model: 'm', channel: 'c', endpoint: 'chat', status: 200, input_units: 0, output_units: 0, cost_micros: i, latency_ms: 1 });
      flushed = ledger.flush().then(() => {
        written = true;
      });
      // Timers still fire while the batch waits for the lock: the event loop is not the one waiting.
      let ticks = 0;
      while (ticks < 5) {
        await new Promise((r) => setTimeout(r, 10));
        ticks++;
      }
      expect(written).toBe(false);
      expect(await usage.totals()).toEqual([]);
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    await flushed;
    expect(written).toBe(true);
    expect(errors).toEqual([]);
    const stored = await store.db.selectFrom('usage').select('cost_micros').where('key_id', '=', keyId).execute();
    expect(stored.map((r) => Number(r.cost_micros)).sort((a, b) => a - b)).toEqual(Array.from({ length: 131 }, (_, i) => i + 1));
    await ledger.close();
    expect(await store.db.selectFrom('usage').select('id').where('key_id', '=', keyId).execute()).toHaveLength(131);
  });
});

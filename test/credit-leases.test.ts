import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import BetterSqlite from 'better-sqlite3';
import { freshDatabaseUrl, testDialect } from './helpers/databases.js';
import { eventually } from './helpers/eventually.js';
import { creditInstances } from './helpers/credit-instances.js';
import { openStore, type Store } from '../src/store/db.js';
import { KeysRepo } from '../src/store/repos/keys.js';
import { ReservationsRepo } from '../src/store/repos/reservations.js';
import { LeasesRepo } from '../src/store/repos/leases.js';
import { CreditService } from '../src/limits/credit.js';
import { DEFAULT_LEASE_OPTIONS, LeaseBook } from '../src/limits/credit-lease.js';
import { GatewayError } from '../src/http/errors.js';
import type { Principal } from '../src/auth/principal.js';

// Credit leases between two instances: two LeaseBooks (each its own instance id) on one database
// (test/helpers/credit-instances.ts).

describe('credit leases', () => {
  const options = { ...DEFAULT_LEASE_OPTIONS, flushMs: 20 };
  const t = creditInstances(options);
  const leaseRows = (keyId: string) => t.stores[0].db.selectFrom('credit_leases').selectAll().where('key_id', '=', keyId).execute();
  const refused = (err: unknown) => err instanceof GatewayError && err.code === 'insufficient_quota';

  it('never draws beyond the stored balance: concurrent holds on two instances total at most the balance', async () => {
    const start = 37 * 1000 + 999;
    const p = await t.keyWith(start);
    const outcomes = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        t.credits[i % 2].reserve(p, 1000).then(
          () => 'held',
          (err: unknown) => (refused(err) ? 'refused' : err),
        ),
      ),
    );
    const held = outcomes.filter((o) => o === 'held').length;
    expect(outcomes.filter((o) => o !== 'held' && o !== 'refused')).toEqual([]);
    expect(held * 1000).toBeLessThanOrEqual(start);
    // Refused only when neither this instance's lease nor the balance could cover one more.
    expect(held).toBeGreaterThanOrEqual(36);
    const a = await t.credits[0].account(p.keyId);
    expect(a!.balanceMicros).toBeGreaterThanOrEqual(0);
    // Every micro-dollar is either in the balance or in a lease row.
    expect(a!.balanceMicros! + a!.leasedMicros).toBe(start);
    for (const row of await leaseRows(p.keyId)) expect(Number(row.amount_micros)).toBeGreaterThanOrEqual(0);
  });

  it('two instances spending one key until both refuse: settled never exceeds the balance, unspent is less than a hold per instance', async () => {
    const start = 100_000;
    const estimate = 700;
    const p = await t.keyWith(start);
    let settled = 0;
    const worker = async (c: CreditService, seed: number) => {
      let refusals = 0;
      for (let i = 0; refusals < 3; i++) {
        try {
          const hold = await c.reserve(p, estimate);
          const cost = 100 + ((seed * 7919 + i * 104729) % 600); // within the hold
          const r = await c.settle(hold, cost);
          settled += r!.chargedMicros;
          expect(r!.overageMicros).toBe(0);
          refusals = 0;
        } catch (err) {
          if (!refused(err)) throw err;
          refusals++;
        }
      }
    };
    await Promise.all(Array.from({ length: 8 }, (_, i) => worker(t.credits[i % 2], i)));
    expect(settled).toBeLessThanOrEqual(start);
    await t.credits[0].flush();
    await t.credits[1].flush();
    expect(await t.credits[1].spendable(p.keyId)).toBe(start - settled);
    // What no instance could hold any more: less than one estimate per instance.
    expect(start - settled).toBeLessThan(2 * estimate);
  });

  it('settles in memory and writes back in batches; a top-up lands in the balance while the lease keeps its own', async () => {
    const p = await t.keyWith(1_000_000);
    const hold = await t.credits[0].reserve(p, 1000);
    // One draw: the larger of 20 holds and 1% of the balance.
    expect((await leaseRows(p.keyId)).map((r) => Number(r.amount_micros))).toEqual([20_000]);
    expect(await t.credits[0].settle(hold, 400)).toEqual({ chargedMicros: 400, overageMicros: 0 });
    expect(await t.credits[0].account(p.keyId)).toEqual({ balanceMicros: 980_000, leasedMicros: 19_600, overageMicros: 0 });
    await t.stores[0].db.updateTable('api_keys').set({ credit_micros: 990_000 }).where('id', '=', p.keyId).execute();
    expect(await t.credits[1].spendable(p.keyId)).toBe(990_000 + 19_600);
  });

  it('takes and settles a hold the lease covers from the lease; a short lease and a cost beyond it still reach the database', async () => {
    const p = await t.keyWith(100_000);
    // The first hold draws (20 × 1000 into the lease), the next ones come from the lease.
    const first = await t.credits[0].reserve(p, 1000);
    const drawn = (await leaseRows(p.keyId)).map((r) => Number(r.amount_micros));
    expect(drawn).toEqual([20_000]);
    const now = await t.credits[0].reserve(p, 1000);
    expect(await t.credits[0].settle(now, 700)).toEqual({ chargedMicros: 700, overageMicros: 0 });
    expect((await leaseRows(p.keyId)).map((r) => Number(r.amount_micros))).toEqual(drawn);
    // A cost beyond the hold and the rest of the lease is charged to the balance.
    const big = await t.credits[0].reserve(p, 1000);
    expect(await t.credits[0].settle(big, 90_000)).toEqual({ chargedMicros: 90_000, overageMicros: 0 });
    // More than the lease and the balance hold together: refused.
    await expect(t.credits[0].reserve(p, 50_000)).rejects.toSatisfy(refused);
    expect(await t.credits[0].settle(first, 1000)).toEqual({ chargedMicros: 1000, overageMicros: 0 });
    await t.credits[0].flush();
    const a = (await t.credits[0].account(p.keyId))!;
    expect(a.balanceMicros! + a.leasedMicros).toBe(100_000 - 700 - 90_000 - 1000);
    expect(a.overageMicros).toBe(0);
  });

  it('returns a crashed instance’s unspent lease to the balance once it expired, and only then', async () => {
    const p = await t.keyWith(50_000);
    // An instance that drew and then died: its book never writes back or renews.
    const dead = new LeaseBook(new LeasesRepo(t.stores[0].db), { ...options, ttlMs: 2000 });
    const hold = await dead.reserve(p.keyId, 1000);
    expect(hold).not.toBeNull();
    dead.halt();
    const repo = new LeasesRepo(t.stores[t.stores.length - 1].db);
    expect(await repo.sweepExpired(options.graceMs)).toBe(0);
    expect(Number((await new ReservationsRepo(t.stores[0].db).account(p.keyId))!.balanceMicros)).toBe(30_000);
    // Past expiry and grace another instance gives it back, once.
    const later = Date.now() + 2000 + options.graceMs + 1;
    expect(await repo.sweepExpired(options.graceMs, later)).toBe(1);
    expect(await repo.sweepExpired(options.graceMs, later)).toBe(0);
    expect(await t.credits[0].account(p.keyId)).toEqual({ balanceMicros: 50_000, leasedMicros: 0, overageMicros: 0 });
  });

  it('gives every lease back at shutdown', async () => {
    const p = await t.keyWith(10_000);
    const h = await t.credits[0].reserve(p, 100);
    await t.credits[0].settle(h, 60);
    await t.books[0].close();
    expect(await leaseRows(p.keyId)).toEqual([]);
    expect((await new ReservationsRepo(t.stores[0].db).account(p.keyId))!.balanceMicros).toBe(10_000 - 60);
  });
});

// The timer's write-backs run off the request path: on SQLite (better-sqlite3 waits for a lock
// synchronously) one that waited for a write lock another process holds would stand the gateway
// still for database.busy_timeout_ms on every tick. They never wait: the settled amount stays in
// the lease until the lock is gone, then reaches the balance exactly once. The busy timeout here is
// 60 s, so a write-back that waited would outlast the test's own timeout.
describe.skipIf(testDialect() !== 'sqlite')('credit lease write-backs on a SQLite file whose write lock another process holds', () => {
  let db: Awaited<ReturnType<typeof freshDatabaseUrl>>;
  let store: Store;
  let book: LeaseBook;

  beforeEach(async () => {
    db = await freshDatabaseUrl();
    store = await openStore(db.url, { timeouts: { busy_timeout_ms: 60_000 } });
  });
  afterEach(async () => {
    await book?.close();
    await store.close();
    await db.drop();
  });

  it('keeps the settled amount without waiting for the lock, then writes it back once', async () => {
    const errors: unknown[] = [];
    const repo = new LeasesRepo(store.db, store.withoutLockWait);
    book = new LeaseBook(repo, { ...DEFAULT_LEASE_OPTIONS, flushMs: 20 }, (e) => errors.push(e));
    const credit = new CreditService(new ReservationsRepo(store.db), { book, repo });
    const row = await new KeysRepo(store.db).create({ name: 't', keyHash: 'h-lease-lock', keyPrefix: 'mg-x', creditMicros: 1_000_000 });
    const p: Principal = { keyId: row.id, name: 't', models: null, rpm: 0, concurrency: 0, limitedCredit: true };
    const balance = async () => (await credit.account(p.keyId))!.balanceMicros;
    const hold = await credit.reserve(p, 1000);

    const other = new BetterSqlite(db.url.slice('sqlite:'.length));
    other.exec('BEGIN IMMEDIATE');
    try {
      await credit.settle(hold, 700);
      expect(book.view(p.keyId)?.pendingMicros).toBe(700);
      // Many ticks meet the lock (each would wait 60 s); the amount stays pending, reported once.
      await new Promise((r) => setTimeout(r, 300));
      expect(book.view(p.keyId)?.pendingMicros).toBe(700);
      expect(errors.length).toBe(1);
      expect(String((errors[0] as Error).message)).toMatch(/database unavailable/);
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    await eventually(() => book.view(p.keyId)?.pendingMicros === 0, 10_000, 'the write-back');
    await book.close();
    expect(await balance()).toBe(1_000_000 - 700);
    expect(await store.db.selectFrom('credit_leases').selectAll().where('key_id', '=', p.keyId).execute()).toEqual([]);
  });
});

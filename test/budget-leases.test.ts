import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { freshDatabaseUrl } from './helpers/databases.js';
import { openStore, type Store } from '../src/store/db.js';
import { KeysRepo } from '../src/store/repos/keys.js';
import { ProjectsRepo } from '../src/store/repos/projects.js';
import { ReservationsRepo, type BudgetAlerts } from '../src/store/repos/reservations.js';
import { LeasesRepo } from '../src/store/repos/leases.js';
import { BudgetLeasesRepo } from '../src/store/repos/budget-leases.js';
import { CreditService, type Hold } from '../src/limits/credit.js';
import { LeaseBook, DEFAULT_LEASE_OPTIONS } from '../src/limits/credit-lease.js';
import { BudgetLeaseBook, DEFAULT_BUDGET_LEASE_OPTIONS } from '../src/limits/budget-lease.js';
import { toPrincipal } from '../src/auth/authenticator.js';
import type { GatewayError } from '../src/http/errors.js';
import type { Principal } from '../src/auth/principal.js';

// Budget windows leased into one instance's memory (the gateway does this on a SQLite file, where
// one process serves the database): holds far from the limit cost no database write, and near the
// limit holds are reservation rows again, admitted exactly up to the budget.

describe('budget leases', () => {
  let db: Awaited<ReturnType<typeof freshDatabaseUrl>>;
  let store: Store;
  let book: LeaseBook;
  let budgetBook: BudgetLeaseBook;
  let credit: CreditService;
  const clock = Date.parse('2026-03-30T12:00:00Z');
  const alerts: BudgetAlerts = { url: 'https://alerts.example/budget', thresholds: [50, 80, 100] };
  const USD = 1_000_000;

  beforeEach(async () => {
    db = await freshDatabaseUrl();
    store = await openStore(db.url);
    book = new LeaseBook(new LeasesRepo(store.db), DEFAULT_LEASE_OPTIONS);
    budgetBook = new BudgetLeaseBook(new BudgetLeasesRepo(store.db, { alerts }), book.instance, { ...DEFAULT_LEASE_OPTIONS, ...DEFAULT_BUDGET_LEASE_OPTIONS });
    credit = new CreditService(new ReservationsRepo(store.db, { alerts }), { book, repo: new LeasesRepo(store.db) }, { now: () => clock, budgetLeases: budgetBook });
  });
  afterEach(async () => {
    await book.close();
    await budgetBook.close();
    await store.close();
    await db.drop();
  });

  async function key(opts: { creditMicros?: number | null; projectId?: string; budgetMicros?: number; period?: string } = {}): Promise<Principal> {
    const keys = new KeysRepo(store.db);
    const hash = `h${Math.random()}`;
    await keys.create({ name: 'k', keyHash: hash, keyPrefix: 'mg-x', creditMicros: opts.creditMicros ?? null, projectId: opts.projectId, budgetMicros: opts.budgetMicros, budgetPeriod: opts.period });
    return toPrincipal((await keys.findByHash(hash))!);
  }

  const windows = async () =>
    (await store.db.selectFrom('budget_windows').selectAll().orderBy('scope').execute()).map((w) => ({ scope: w.scope.split(':')[0], spent: Number(w.spent_micros), held: Number(w.held_micros) }));
  const rows = async () => Number((await store.db.selectFrom('reservations').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);

  it('far from the limit, holds come from the lease: no reservation row, the window counts the lease as held', async () => {
    const prj = await new ProjectsRepo(store.db).create({ name: 'far', budget_micros: 1000 * USD, budget_period: 'month' });
    const p = await key({ creditMicros: 100 * USD, projectId: prj.id });
    const holds = await Promise.all(Array.from({ length: 30 }, () => credit.reserve(p, 0.01 * USD)));
    expect(holds.every((h) => h.budget && h.lease && h.reservationId === null)).toBe(true);
    // One draw of 1% of the room ($10), which covers all 30.
    expect(await windows()).toEqual([{ scope: 'project', spent: 0, held: 10 * USD }]);
    await Promise.all(holds.map((h) => credit.settle(h, 0.004 * USD)));
    await credit.flush();
    expect(await windows()).toEqual([{ scope: 'project', spent: 0.12 * USD, held: 10 * USD - 0.12 * USD }]);
    expect(await rows()).toBe(0);
    expect(await credit.account(p.keyId)).toMatchObject({ balanceMicros: expect.any(Number) });
    expect(await credit.spendable(p.keyId)).toBe(100 * USD - 0.12 * USD);
    // Shutdown gives the lease's room back: only the spend stays.
    await budgetBook.close();
    expect(await windows()).toEqual([{ scope: 'project', spent: 0.12 * USD, held: 0 }]);
  });

  it('near the limit the lease goes back and rows admit exactly up to the budget', async () => {
    const p = await key({ creditMicros: 100 * USD, budgetMicros: 1 * USD, period: 'day' });
    // A small hold draws 20 × $0.01 into the lease.
    const small = await credit.reserve(p, 0.01 * USD);
    expect(small.budget).toBeDefined();
    expect(budgetBook.view(`key:${p.keyId}`, Date.parse('2026-03-30T00:00:00Z'))?.availableMicros).toBe(0.19 * USD);
    // $0.85 fits the budget only with the lease's unheld $0.19: it goes back, and a row holds exactly.
    const big = await credit.reserve(p, 0.85 * USD);
    expect(big.reservationId).toMatch(/^res_/);
    expect(await windows()).toEqual([{ scope: 'key', spent: 0, held: 0.86 * USD }]);
    // $0.14 is left: 14 of 20 simultaneous $0.01 holds, exactly.
    const results = await Promise.allSettled(Array.from({ length: 20 }, () => credit.reserve(p, 0.01 * USD)));
    const held = results.filter((r): r is PromiseFulfilledResult<Hold> => r.status === 'fulfilled').map((r) => r.value);
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => r.reason as GatewayError);
    expect(held).toHaveLength(14);
    expect(refused.every((e) => e.status === 402 && e.code === 'budget_exceeded')).toBe(true);
    expect(refused[0].message).toContain('$1.00 of it is spent or held');
    // Settles free the rest of their holds at once (the small one through its lease).
    await credit.settle(big, 0.5 * USD);
    await credit.settle(small, 0.01 * USD);
    await Promise.all(held.map((h) => credit.release(h)));
    await credit.flush();
    await budgetBook.close();
    expect(await windows()).toEqual([{ scope: 'key', spent: 0.51 * USD, held: 0 }]);
    expect(await credit.spendable(p.keyId)).toBe(100 * USD - 0.51 * USD);
  });

  it("a crashed instance's lease returns to its window once expired", async () => {
    const p = await key({ budgetMicros: 10 * USD, period: 'week' });
    const h = await credit.reserve(p, 0.1 * USD);
    await credit.settle(h, 0.1 * USD);
    budgetBook.halt();
    // The lease of $2 (20 × $0.10) is still counted; its settle was never written back.
    expect(await windows()).toEqual([{ scope: 'key', spent: 0, held: 2 * USD }]);
    const other = new BudgetLeasesRepo(store.db);
    expect(await other.sweepExpired(DEFAULT_LEASE_OPTIONS.graceMs, Date.now() + DEFAULT_LEASE_OPTIONS.ttlMs + DEFAULT_LEASE_OPTIONS.graceMs + 1)).toBe(1);
    expect(await windows()).toEqual([{ scope: 'key', spent: 0, held: 0 }]);
  });

  it('threshold alerts are queued once each when leased spend is written back', async () => {
    const p = await key({ budgetMicros: 100 * USD, period: 'month' });
    for (let i = 0; i < 3; i++) {
      // $30 each: 50% is crossed by the second write-back, 80% by the third.
      await credit.settle(await credit.reserve(p, 0.1 * USD), 30 * USD);
      await credit.flush();
    }
    const events = (await store.db.selectFrom('webhook_outbox').selectAll().execute()).map((r) => JSON.parse(r.payload) as { data: { threshold_percent: number; key_id: string; spent_usd: number } });
    expect(events.map((e) => e.data.threshold_percent).sort()).toEqual([50, 80]);
    expect(events.every((e) => e.data.key_id === p.keyId)).toBe(true);
    expect((await windows())[0].spent).toBe(90 * USD);
  });
});

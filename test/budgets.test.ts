import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { freshDatabaseUrl, testDialect } from './helpers/databases.js';
import { openStore, type Store } from '../src/store/db.js';
import { KeysRepo } from '../src/store/repos/keys.js';
import { ProjectsRepo } from '../src/store/repos/projects.js';
import { ReservationsRepo, type BudgetAlerts } from '../src/store/repos/reservations.js';
import { LeasesRepo } from '../src/store/repos/leases.js';
import { CreditService, type Hold } from '../src/limits/credit.js';
import { LeaseBook, DEFAULT_LEASE_OPTIONS } from '../src/limits/credit-lease.js';
import { toPrincipal } from '../src/auth/authenticator.js';
import { GatewayError } from '../src/http/errors.js';
import type { Principal } from '../src/auth/principal.js';

// Budgets with reset windows, held in the database with the credit: on PostgreSQL two stores (two
// pools, as two instances have) race on real row locks; on SQLite both share the one store. The
// clock is injected, so the window edges are exact instants.

describe('budgets', () => {
  let db: Awaited<ReturnType<typeof freshDatabaseUrl>>;
  let stores: Store[];
  let books: LeaseBook[];
  let credits: CreditService[];
  let clock: number;
  const alerts: BudgetAlerts = { url: 'https://alerts.example/budget', thresholds: [50, 80, 100] };

  beforeEach(async () => {
    db = await freshDatabaseUrl();
    const first = await openStore(db.url);
    stores = [first, testDialect() === 'postgres' ? await openStore(db.url) : first];
    clock = Date.parse('2026-03-30T12:00:00Z');
    books = stores.map((s) => new LeaseBook(new LeasesRepo(s.db), DEFAULT_LEASE_OPTIONS));
    credits = stores.map((s, i) => new CreditService(new ReservationsRepo(s.db, { alerts }), { book: books[i], repo: new LeasesRepo(s.db) }, { now: () => clock }));
  });
  afterEach(async () => {
    for (const b of books) await b.close();
    for (const s of new Set(stores)) await s.close();
    await db.drop();
  });

  const USD = 1_000_000;

  async function project(fields: Parameters<ProjectsRepo['create']>[0]) {
    return new ProjectsRepo(stores[0].db).create(fields);
  }

  /** A key as the authenticator sees it (its project's ratio and budget joined in). */
  async function key(opts: { creditMicros?: number | null; projectId?: string; budgetMicros?: number; period?: string } = {}): Promise<Principal> {
    const keys = new KeysRepo(stores[0].db);
    const hash = `h${Math.random()}`;
    await keys.create({ name: 'k', keyHash: hash, keyPrefix: 'mg-x', creditMicros: opts.creditMicros ?? null, projectId: opts.projectId, budgetMicros: opts.budgetMicros, budgetPeriod: opts.period });
    return toPrincipal((await keys.findByHash(hash))!);
  }

  /** `n` holds of `amount` at once, alternating between the instances; the admitted ones and the refusals. */
  async function race(p: Principal, n: number, amount: number) {
    const results = await Promise.allSettled(Array.from({ length: n }, (_, i) => credits[i % 2].reserve(p, amount)));
    const held = results.filter((r): r is PromiseFulfilledResult<Hold> => r.status === 'fulfilled').map((r) => r.value);
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => r.reason as GatewayError);
    return { held, refused };
  }

  const windows = async () => (await stores[0].db.selectFrom('budget_windows').selectAll().orderBy('scope').orderBy('window_start').execute()).map((w) => ({ ...w, spent_micros: Number(w.spent_micros), held_micros: Number(w.held_micros), window_start: Number(w.window_start) }));

  it('a day budget on a key and a month budget on its project refuse at the exact amount across two instances', async () => {
    const prj = await project({ name: 'acme', budget_micros: 1.5 * USD, budget_period: 'month' });
    const a = await key({ creditMicros: 100 * USD, projectId: prj.id, budgetMicros: 1 * USD, period: 'day' });
    const b = await key({ creditMicros: null, projectId: prj.id });
    expect(a.budgets!.map((r) => r.scope)).toEqual([`key:${a.keyId}`, `project:${prj.id}`]);

    const first = await race(a, 60, 0.05 * USD);
    expect(first.held).toHaveLength(20);
    expect(first.refused).toHaveLength(40);
    for (const err of first.refused) {
      expect(err).toBeInstanceOf(GatewayError);
      expect(err.status).toBe(402);
      expect(err.code).toBe('budget_exceeded');
      expect(err.headers['x-budget-reset']).toBe('2026-03-31T00:00:00Z');
      expect(err.message).toContain('day budget of $1.00');
      expect(err.message).toContain('resets at 2026-03-31T00:00:00Z');
    }
    // The key with unlimited credit has only the project's budget: what the first key left of it.
    const second = await race(b, 60, 0.05 * USD);
    expect(second.held).toHaveLength(10);
    expect(second.refused[0].message).toContain('The project "acme"');
    expect(second.refused[0].headers['x-budget-reset']).toBe('2026-04-01T00:00:00Z');

    const w = await windows();
    expect(w.map((x) => [x.scope.split(':')[0], x.held_micros, x.spent_micros])).toEqual([
      ['key', 1 * USD, 0],
      ['project', 1.5 * USD, 0],
    ]);
    // The balance paid for the first key's holds only, and no lease was drawn for a budgeted key.
    expect(await credits[0].account(a.keyId)).toMatchObject({ balanceMicros: 99 * USD, leasedMicros: 0 });

    // Settles replace holds: a cheaper real cost frees the rest of the window at once; a release frees it all.
    await Promise.all(first.held.slice(0, 10).map((h, i) => credits[i % 2].settle(h, 0.01 * USD)));
    await Promise.all(first.held.slice(10, 15).map((h, i) => credits[i % 2].release(h)));
    const after = await windows();
    expect(after[0]).toMatchObject({ held_micros: 0.25 * USD, spent_micros: 0.1 * USD });
    expect(after[1]).toMatchObject({ held_micros: 0.75 * USD, spent_micros: 0.1 * USD });
    // 0.65 of the key's dollar is free again, but the project has exactly 0.65 too: 13 holds of 0.05.
    const third = await race(a, 30, 0.05 * USD);
    expect(third.held).toHaveLength(13);
    expect(await credits[0].account(a.keyId)).toMatchObject({ balanceMicros: 100 * USD - 0.1 * USD - 0.25 * USD - 0.65 * USD });
  });

  it('resets at the window edge, day and month alike', async () => {
    const prj = await project({ name: 'edge', budget_micros: 2.5 * USD, budget_period: 'month' });
    const a = await key({ projectId: prj.id, budgetMicros: 1.5 * USD, period: 'day' });
    clock = Date.parse('2026-03-30T23:59:59.999Z');
    await credits[0].settle(await credits[0].reserve(a, 1.5 * USD), 1.5 * USD);
    await expect(credits[1].reserve(a, 1)).rejects.toMatchObject({ status: 402, headers: { 'x-budget-reset': '2026-03-31T00:00:00Z' } });
    clock = Date.parse('2026-03-31T00:00:00.000Z');
    // A new day, but the month has only $1 of its $2.50 left.
    await expect(credits[1].reserve(a, 1.5 * USD)).rejects.toMatchObject({ status: 402, headers: { 'x-budget-reset': '2026-04-01T00:00:00Z' } });
    await credits[1].settle(await credits[1].reserve(a, 1 * USD), 1 * USD);
    clock = Date.parse('2026-03-31T23:59:59.999Z');
    await expect(credits[0].reserve(a, 1)).rejects.toThrow(/The project "edge" of this key has a month budget of \$2\.50; \$2\.50 of it/);
    clock = Date.parse('2026-04-01T00:00:00.000Z');
    const h = await credits[0].reserve(a, 1.5 * USD);
    expect(h.reservationId).toMatch(/^res_/);
    const w = await windows();
    expect(w.filter((x) => x.scope.startsWith('project:')).map((x) => [new Date(x.window_start).toISOString(), x.spent_micros, x.held_micros])).toEqual([
      ['2026-03-01T00:00:00.000Z', 2.5 * USD, 0],
      ['2026-04-01T00:00:00.000Z', 0, 1.5 * USD],
    ]);
  });

  it("a project's price ratio multiplies holds and settles; the credit and budget see the paid price", async () => {
    const prj = await project({ name: 'resell', price_ratio: 2.5, budget_micros: 10 * USD, budget_period: 'week' });
    const p = await key({ creditMicros: 5 * USD, projectId: prj.id });
    expect(p.priceRatio).toBe(2.5);
    const h = await credits[0].reserve(p, 0.1 * USD);
    expect(h.amountMicros).toBe(0.25 * USD);
    expect(await credits[1].settle(h, 0.04 * USD)).toEqual({ chargedMicros: 0.1 * USD, overageMicros: 0 });
    expect(await credits[0].account(p.keyId)).toMatchObject({ balanceMicros: 4.9 * USD });
    // A stored hold (a video task's) settles with the ratio its key has.
    const t = await credits[0].reserveDurable(p, 1 * USD);
    expect(await credits[1].settle({ reservationId: t.reservationId, keyId: p.keyId }, 0.2 * USD)).toEqual({ chargedMicros: 0.5 * USD, overageMicros: 0 });
    const [w] = await windows();
    // Week windows start on Monday: 2026-03-30 is one.
    expect(new Date(w.window_start).toISOString()).toBe('2026-03-30T00:00:00.000Z');
    expect(w.spent_micros).toBe(0.6 * USD);
    // A video the provider finished after its hold was released is charged at the ratio, and counts.
    expect(await credits[1].chargeWithoutHold(p.keyId, 0.1 * USD)).toEqual({ chargedMicros: 0.25 * USD, overageMicros: 0 });
    expect((await windows())[0].spent_micros).toBe(0.85 * USD);
    // A refusal's hint reasons in list prices: a $0.001 balance at ratio 2.5 buys $0.0004 of list price.
    const poor = await key({ creditMicros: 1000, projectId: prj.id });
    await expect(credits[0].reserve(poor, 1000, (balance) => `list ${balance}`)).rejects.toThrow(/needs \$0\.0025 .* has \$0\.001 left\. list 400 Ask/);
    // Without a project (or without a budget) the lease path keeps its ratio of 1.
    const plain = await key({ creditMicros: 5 * USD });
    const lh = await credits[0].reserve(plain, 0.1 * USD);
    expect(lh.lease).toBeDefined();
    expect(await credits[0].settle(lh, 0.1 * USD)).toEqual({ chargedMicros: 0.1 * USD, overageMicros: 0 });
  });

  it('queues one budget.threshold event per threshold per window, even when two instances settle at once', async () => {
    const prj = await project({ name: 'alerted', budget_micros: 1 * USD, budget_period: 'day' });
    const p = await key({ projectId: prj.id });
    const holds = await Promise.all(Array.from({ length: 10 }, (_, i) => credits[i % 2].reserve(p, 0.1 * USD)));
    await Promise.all(holds.map((h, i) => credits[i % 2].settle(h, 0.1 * USD)));
    const rows = await stores[0].db.selectFrom('webhook_outbox').selectAll().orderBy('created_at').execute();
    const events = rows.map((r) => JSON.parse(r.payload) as { type: string; data: Record<string, unknown> });
    expect(rows.every((r) => r.event === 'budget.threshold' && r.url === alerts.url && r.state === 'pending')).toBe(true);
    expect(events.map((e) => e.data.threshold_percent).sort((x, y) => Number(x) - Number(y))).toEqual([50, 80, 100]);
    expect(events[0]).toMatchObject({ type: 'budget.threshold', data: { scope: 'project', name: 'alerted', project_id: prj.id, period: 'day', budget_usd: 1, resets_at: '2026-03-31T00:00:00.000Z' } });
    // The next day is a new window: its own alerts.
    clock = Date.parse('2026-03-31T08:00:00Z');
    await credits[0].settle(await credits[0].reserve(p, 0.6 * USD), 0.6 * USD);
    expect(await stores[0].db.selectFrom('webhook_outbox').select('id').execute()).toHaveLength(4);
  });

  it('sends the 100 % alert once when holds make the budget refuse before settled spend reaches it', async () => {
    const prj = await project({ name: 'held-full', budget_micros: 1 * USD, budget_period: 'day' });
    const p = await key({ projectId: prj.id });
    const outbox = async () => (await stores[0].db.selectFrom('webhook_outbox').selectAll().orderBy('created_at').execute()).map((r) => JSON.parse(r.payload) as { data: Record<string, unknown> });
    // $0.40 settled (no threshold yet), then $0.60 held: the window is full with 40 % spent.
    await credits[0].settle(await credits[0].reserve(p, 0.4 * USD), 0.4 * USD);
    const open = await credits[1].reserve(p, 0.6 * USD);
    expect(await outbox()).toEqual([]);
    // Six requests refused at once on two instances: one 100 % alert, saying why.
    const { held, refused } = await race(p, 6, 0.05 * USD);
    expect(held).toHaveLength(0);
    expect(refused.every((e) => e.code === 'budget_exceeded')).toBe(true);
    const events = await outbox();
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'budget.threshold', data: { scope: 'project', name: 'held-full', threshold_percent: 100, trigger: 'refused', budget_usd: 1, spent_usd: 0.4, held_usd: 0.6, requested_usd: 0.05 } });
    // The hold settles below its amount: 50 % and 80 % follow from the spend; 100 % is not sent again.
    await credits[1].settle(open, 0.5 * USD);
    await expect(credits[0].reserve(p, 0.2 * USD)).rejects.toThrow(/budget/);
    const after = await outbox();
    expect(after.map((e) => [e.data.threshold_percent, e.data.trigger])).toEqual([
      [100, 'refused'],
      [50, 'spent'],
      [80, 'spent'],
    ]);
    // A budget of 0 refuses everything by design and alerts nothing.
    const off = await key({ budgetMicros: 0, period: 'day' });
    await expect(credits[0].reserve(off, 1)).rejects.toThrow(/budget/);
    expect(await outbox()).toHaveLength(3);
    // The next day is a new window: a refusal there is alerted again.
    clock = Date.parse('2026-03-31T08:00:00Z');
    await credits[0].reserve(p, 0.9 * USD);
    await expect(credits[1].reserve(p, 0.2 * USD)).rejects.toThrow(/budget/);
    expect((await outbox()).filter((e) => e.data.trigger === 'refused')).toHaveLength(2);
  });
});

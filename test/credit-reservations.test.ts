import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { freshDatabaseUrl, testDialect } from './helpers/databases.js';
import { openStore, type Store } from '../src/store/db.js';
import { KeysRepo } from '../src/store/repos/keys.js';
import { ReservationsRepo } from '../src/store/repos/reservations.js';
import { CreditService, type Hold } from '../src/limits/credit.js';
import { GatewayError } from '../src/http/errors.js';
import type { Principal } from '../src/auth/principal.js';

// On PostgreSQL, two stores (two pools) on one database, as two gateway instances would have, so
// every race below crosses connections and meets real row locks. On SQLite one process owns the
// file (better-sqlite3 is synchronous: a second in-process connection would wait on the lock while
// blocking the event loop that must release it), so both "instances" share the one store.

describe('credit reservations', () => {
  let db: Awaited<ReturnType<typeof freshDatabaseUrl>>;
  let stores: Store[];
  let credits: CreditService[];
  let repo: ReservationsRepo;

  beforeEach(async () => {
    db = await freshDatabaseUrl();
    const first = await openStore(db.url);
    stores = [first, testDialect() === 'postgres' ? await openStore(db.url) : first];
    credits = stores.map((s) => new CreditService(new ReservationsRepo(s.db)));
    repo = new ReservationsRepo(stores[0].db);
  });
  afterEach(async () => {
    for (const s of new Set(stores)) await s.close();
    await db.drop();
  });

  async function keyWith(creditMicros: number | null): Promise<Principal> {
    const row = await new KeysRepo(stores[0].db).create({ name: 't', keyHash: `h${Math.random()}`, keyPrefix: 'mg-x', creditMicros });
    return { keyId: row.id, name: 't', models: null, rpm: 0, concurrency: 0, limitedCredit: creditMicros !== null };
  }

  const states = (keyId: string) =>
    stores[0].db.selectFrom('reservations').select(['state', 'amount_micros', 'charged_micros']).where('key_id', '=', keyId).execute();

  it('accepts exactly 37 of 100 concurrent reservations against a balance that covers 37', async () => {
    const p = await keyWith(37 * 1000 + 999);
    const outcomes = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        credits[i % 2].reserve(p, 1000).then(
          () => 'held',
          (err: unknown) => (err instanceof GatewayError && err.status === 403 && err.code === 'insufficient_quota' ? 'refused' : err),
        ),
      ),
    );
    expect(outcomes.filter((o) => o === 'held')).toHaveLength(37);
    expect(outcomes.filter((o) => o === 'refused')).toHaveLength(63);
    expect(await repo.balance(p.keyId)).toBe(999);
    expect(await repo.heldCount(p.keyId)).toBe(37);
  });

  it('closes each reservation exactly once when settles and releases race', async () => {
    const start = 100_000;
    const p = await keyWith(start);
    const holds: Hold[] = [];
    for (let i = 0; i < 20; i++) holds.push(await credits[0].reserve(p, 1000));
    // Per hold: a settle under the hold, a settle over it (an overage touches the balance first)
    // and two releases, from both instances at once.
    const results = await Promise.all(
      holds.flatMap((h, i) => [
        credits[0].settle(h, 300 + i).then((r) => ({ i, kind: 'settle', closed: r !== null, charged: r?.chargedMicros ?? null })),
        credits[1].settle(h, 1500).then((r) => ({ i, kind: 'settle', closed: r !== null, charged: r?.chargedMicros ?? null })),
        credits[0].release(h).then((closed) => ({ i, kind: 'release', closed, charged: closed ? 0 : null })),
        credits[1].release(h).then((closed) => ({ i, kind: 'release', closed, charged: closed ? 0 : null })),
      ]),
    );
    for (let i = 0; i < 20; i++) expect(results.filter((r) => r.i === i && r.closed)).toHaveLength(1);
    const rows = await states(p.keyId);
    expect(rows.every((r) => r.state === 'settled' || r.state === 'released')).toBe(true);
    // What the winners report is what the rows say, and the balance moved by exactly that.
    const charged = results.filter((r) => r.closed).reduce((n, r) => n + (r.charged ?? 0), 0);
    expect(rows.reduce((n, r) => n + Number(r.charged_micros), 0)).toBe(charged);
    expect(await repo.balance(p.keyId)).toBe(start - charged);
    expect(await repo.heldCount(p.keyId)).toBe(0);
    // A late settle or release changes nothing.
    expect(await credits[0].settle(holds[0], 5000)).toBeNull();
    expect(await credits[1].release(holds[0])).toBe(false);
    expect(await repo.balance(p.keyId)).toBe(start - charged);
  });

  it('charges a cost above the hold in full: the balance down to zero, the rest owed and the key refused until a top-up pays it', async () => {
    const p = await keyWith(1000);
    const hold = await credits[0].reserve(p, 600);
    expect(await repo.balance(p.keyId)).toBe(400);
    expect(await credits[0].settle(hold, 5000)).toEqual({ chargedMicros: 5000, overageMicros: 4000 });
    expect(await repo.account(p.keyId)).toEqual({ balanceMicros: 0, overageMicros: 4000 });
    const refused = await credits[1].reserve(p, 0).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(GatewayError);
    expect((refused as GatewayError).code).toBe('insufficient_quota');
    expect((refused as GatewayError).message).toContain('owes $0.004');
    // A top-up pays the debt first: 3000 leaves 1000 owed and the key still refused.
    expect(await repo.topUp(p.keyId, 3000)).toBe(true);
    expect(await repo.account(p.keyId)).toEqual({ balanceMicros: 0, overageMicros: 1000 });
    await expect(credits[0].reserve(p, 0)).rejects.toThrow(/owes \$0\.001/);
    expect(await repo.topUp(p.keyId, 1500)).toBe(true);
    expect(await repo.account(p.keyId)).toEqual({ balanceMicros: 500, overageMicros: 0 });
    await credits[0].reserve(p, 500);

    // Many overages at once: the balance covers exactly what it has, the rest is owed, to the micro.
    const q = await keyWith(1000);
    const holds = await Promise.all(Array.from({ length: 10 }, () => credits[0].reserve(q, 50)));
    expect(await repo.balance(q.keyId)).toBe(500);
    const settled = await Promise.all(holds.map((h, i) => credits[i % 2].settle(h, 500)));
    expect(settled.every((c) => c?.chargedMicros === 500)).toBe(true);
    const owed = settled.reduce((n, c) => n + (c?.overageMicros ?? 0), 0);
    expect(owed).toBe(10 * 500 - 1000);
    expect(await repo.account(q.keyId)).toEqual({ balanceMicros: 0, overageMicros: owed });
  });

  it('returns the unused part of a hold and all of a released one', async () => {
    const p = await keyWith(10_000);
    const a = await credits[0].reserve(p, 4000);
    const b = await credits[0].reserve(p, 4000);
    expect(await repo.balance(p.keyId)).toBe(2000);
    expect(await credits[0].settle(a, 1500)).toEqual({ chargedMicros: 1500, overageMicros: 0 });
    expect(await credits[0].release(b)).toBe(true);
    expect(await repo.balance(p.keyId)).toBe(8500);
  });

  it('survives pricing bugs: a NaN estimate holds nothing, a NaN cost charges the hold, an infinite one empties the balance', async () => {
    const p = await keyWith(10_000);
    const nanHold = await credits[0].reserve(p, NaN);
    expect(nanHold.amountMicros).toBe(0);
    expect(await credits[0].settle(nanHold, 700)).toEqual({ chargedMicros: 700, overageMicros: 0 });
    expect(await repo.balance(p.keyId)).toBe(9300);
    const held = await credits[0].reserve(p, 1000);
    expect(await credits[0].settle({ reservationId: held.reservationId }, NaN)).toEqual({ chargedMicros: 1000, overageMicros: 0 });
    expect(await repo.balance(p.keyId)).toBe(8300);
    await expect(credits[0].reserve(p, Infinity)).rejects.toMatchObject({ status: 403, code: 'insufficient_quota' });
    const last = await credits[0].reserve(p, 300);
    // Clamped to the largest exact integer: the balance is emptied and the rest is owed.
    expect(await credits[0].settle(last, Infinity)).toEqual({ chargedMicros: Number.MAX_SAFE_INTEGER, overageMicros: Number.MAX_SAFE_INTEGER - 8300 });
    expect(await repo.account(p.keyId)).toEqual({ balanceMicros: 0, overageMicros: Number.MAX_SAFE_INTEGER - 8300 });
  });

  it('refuses with 403 insufficient_quota when the balance is short, and reserves nothing for unlimited keys', async () => {
    const p = await keyWith(10);
    await expect(credits[0].reserve(p, 11)).rejects.toMatchObject({ status: 403, code: 'insufficient_quota' });
    expect(await repo.balance(p.keyId)).toBe(10);
    const free = await keyWith(null);
    const hold = await credits[0].reserve(free, 1e9);
    expect(hold.reservationId).toBeNull();
    expect(await credits[0].settle(hold, 123.4)).toEqual({ chargedMicros: 124, overageMicros: 0 });
    expect(await repo.balance(free.keyId)).toBeNull();
    expect(await repo.topUp(free.keyId, 5)).toBe(false);
    expect(await repo.topUp(p.keyId, 5)).toBe(true);
    expect(await repo.balance(p.keyId)).toBe(15);
  });
});

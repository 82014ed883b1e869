import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { freshDatabaseUrl, testDialect } from './helpers/databases.js';
import { eventually } from './helpers/eventually.js';
import { openStore, type Store } from '../src/store/db.js';
import { KeysRepo } from '../src/store/repos/keys.js';
import { ReservationsRepo } from '../src/store/repos/reservations.js';
import { LeasesRepo } from '../src/store/repos/leases.js';
import { CreditService, type Hold } from '../src/limits/credit.js';
import { DEFAULT_LEASE_OPTIONS, LeaseBook } from '../src/limits/credit-lease.js';
import type { Principal } from '../src/auth/principal.js';

// A video task's settle beyond its hold, while the key's money sits in credit leases (chat holds of
// one or two instances): the stored balance is 0 then, so the settle records what it cannot cover
// as owed. Leases coming back must pay that debt before they become balance again: overage is what
// neither the hold, the balance nor the key's leases cover, and a key never both has money and owes.
// On PostgreSQL the two instances are two stores (two pools); on SQLite two books share one file.

describe('overage with credit leases', () => {
  let db: Awaited<ReturnType<typeof freshDatabaseUrl>>;
  let stores: Store[];
  let books: LeaseBook[];
  let credits: CreditService[];

  const options = { ...DEFAULT_LEASE_OPTIONS, flushMs: 20 };

  beforeEach(async () => {
    db = await freshDatabaseUrl();
    const first = await openStore(db.url);
    stores = [first, testDialect() === 'postgres' ? await openStore(db.url) : first];
    books = stores.map((s) => new LeaseBook(new LeasesRepo(s.db), options));
    credits = stores.map((s, i) => new CreditService(new ReservationsRepo(s.db), { book: books[i], repo: new LeasesRepo(s.db) }));
  });
  afterEach(async () => {
    for (const b of books) await b.close();
    for (const s of new Set(stores)) await s.close();
    await db.drop();
  });

  async function keyWith(creditMicros: number): Promise<Principal> {
    const row = await new KeysRepo(stores[0].db).create({ name: 't', keyHash: `h${Math.random()}`, keyPrefix: 'mg-x', creditMicros });
    return { keyId: row.id, name: 't', models: null, rpm: 0, concurrency: 0, limitedCredit: true };
  }
  /** The key's row as stored: balance and debt, plus what its lease rows hold. */
  async function stored(keyId: string) {
    const key = await stores[0].db.selectFrom('api_keys').select(['credit_micros', 'overage_micros']).where('id', '=', keyId).executeTakeFirstOrThrow();
    const leases = await stores[0].db.selectFrom('credit_leases').select('amount_micros').where('key_id', '=', keyId).execute();
    return { balance: Number(key.credit_micros), owed: Number(key.overage_micros), leased: leases.reduce((a, r) => a + Number(r.amount_micros), 0) };
  }
  /** A chat request on one instance: held from its lease, settled at `cost`. */
  async function chat(c: CreditService, p: Principal, hold: number, cost: number): Promise<void> {
    const h = await c.reserve(p, hold);
    expect((await c.settle(h, cost))!.overageMicros).toBe(0);
  }
  const neverBoth = (s: { balance: number; owed: number }) => expect(s.balance > 0 && s.owed > 0, JSON.stringify(s)).toBe(false);

  it('two instances: their leases pay the debt as they come back; the key ends owing only the real shortfall, or nothing', async () => {
    const p = await keyWith(200_000);
    const video: Hold = await credits[0].reserveDurable(p, 100_000);
    // Each instance draws 20 holds' worth (50,000): the stored balance is now 0.
    await chat(credits[0], p, 2_500, 20);
    await chat(credits[1], p, 2_500, 500);
    await Promise.all(credits.map((c) => c.flush()));
    expect(await stored(p.keyId)).toEqual({ balance: 0, owed: 0, leased: 100_000 - 20 - 500 });

    // The task cost 84,480 more than its hold. This instance's lease (49,980 unspent) pays at once.
    const settled = await credits[0].settle(video, 184_480);
    expect(settled).toEqual({ chargedMicros: 184_480, overageMicros: 84_480 - 49_980 });
    let s = await stored(p.keyId);
    expect(s).toEqual({ balance: 0, owed: 34_500, leased: 49_500 });
    neverBoth(s);

    // The other instance learns the key owes at its next write-back (here: after one more request)
    // and gives back what it has unheld, without waiting for its lease to go idle.
    await chat(credits[1], p, 100, 100);
    await eventually(async () => (await stored(p.keyId)).leased === 0, 5000, 'the other lease given back');
    s = await stored(p.keyId);
    // 200,000 − 184,480 − 20 − 500 − 100: all that is left, nothing owed.
    expect(s).toEqual({ balance: 14_900, owed: 0, leased: 0 });
    // And the key spends again.
    await chat(credits[1], p, 100, 50);
  });

  it('two instances: when the leases cannot cover it, the key owes exactly the shortfall and holds nothing', async () => {
    const p = await keyWith(200_000);
    const video: Hold = await credits[0].reserveDurable(p, 100_000);
    await chat(credits[0], p, 2_500, 20);
    await chat(credits[1], p, 2_500, 500);
    await credits[0].settle(video, 100_000 + 109_000);
    await Promise.all(books.map((b) => b.close()));
    const s = await stored(p.keyId);
    // 200,000 − 209,000 − 20 − 500 = −9,520: the real shortfall, with no balance beside it.
    expect(s).toEqual({ balance: 0, owed: 9_520, leased: 0 });
    // A top-up pays the debt first.
    await new ReservationsRepo(stores[0].db).topUp(p.keyId, 10_000);
    expect(await stored(p.keyId)).toEqual({ balance: 480, owed: 0, leased: 0 });
  });

  it('one instance holding the lease: its own lease covers the video settle; nothing is owed', async () => {
    const p = await keyWith(100_000);
    const video: Hold = await credits[0].reserveDurable(p, 60_000);
    // 20 × 2,000 = the whole remaining balance into this instance's lease.
    await chat(credits[0], p, 2_000, 1_000);
    await credits[0].flush();
    expect(await stored(p.keyId)).toEqual({ balance: 0, owed: 0, leased: 39_000 });
    expect(await credits[0].settle(video, 70_000)).toEqual({ chargedMicros: 70_000, overageMicros: 0 });
    const s = await stored(p.keyId);
    expect(s).toEqual({ balance: 29_000, owed: 0, leased: 0 });
    // Not refused: the key still has 29,000.
    await chat(credits[0], p, 1_000, 1_000);
  });

  it('a crashed instance’s lease returned by the sweep, and a released hold, pay the debt before the balance', async () => {
    const p = await keyWith(100_000);
    const video: Hold = await credits[0].reserveDurable(p, 30_000);
    const other: Hold = await credits[0].reserveDurable(p, 10_000);
    const dead = new LeaseBook(new LeasesRepo(stores[0].db), { ...options, ttlMs: 1000 });
    const h = await dead.reserve(p.keyId, 3_000);
    expect(h).not.toBeNull();
    dead.halt();
    expect(await stored(p.keyId)).toEqual({ balance: 0, owed: 0, leased: 60_000 });
    await credits[1].settle(video, 30_000 + 75_000);
    neverBoth(await stored(p.keyId));
    expect((await stored(p.keyId)).owed).toBe(75_000);
    // The released hold pays 10,000 of it.
    await credits[0].release(other);
    expect(await stored(p.keyId)).toEqual({ balance: 0, owed: 65_000, leased: 60_000 });
    // Past expiry and grace the dead lease returns: 60,000 pays what it can.
    expect(await new LeasesRepo(stores[0].db).sweepExpired(options.graceMs, Date.now() + 1000 + options.graceMs + 1)).toBe(1);
    expect(await stored(p.keyId)).toEqual({ balance: 0, owed: 5_000, leased: 0 });
  });
});

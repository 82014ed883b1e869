import { describe, expect, it } from 'vitest';
import { eventually } from './helpers/eventually.js';
import { creditInstances } from './helpers/credit-instances.js';
import { ReservationsRepo } from '../src/store/repos/reservations.js';
import { LeasesRepo } from '../src/store/repos/leases.js';
import type { CreditService, Hold } from '../src/limits/credit.js';
import { DEFAULT_LEASE_OPTIONS, LeaseBook } from '../src/limits/credit-lease.js';
import type { Principal } from '../src/auth/principal.js';

// A video task's settle beyond its hold, while the key's money sits in credit leases (chat holds of
// one or two instances): the stored balance is 0 then, so the settle records what it cannot cover
// as owed. Leases coming back must pay that debt before they become balance again: overage is what
// neither the hold, the balance nor the key's leases cover, and a key never both has money and owes.
// Two instances as test/helpers/credit-instances.ts makes them (two pools on PostgreSQL).

describe('overage with credit leases', () => {
  const options = { ...DEFAULT_LEASE_OPTIONS, flushMs: 20 };
  const t = creditInstances(options);
  const { keyWith } = t;

  /** The key's row as stored: balance and debt, plus what its lease rows hold. */
  async function stored(keyId: string) {
    const key = await t.stores[0].db.selectFrom('api_keys').select(['credit_micros', 'overage_micros']).where('id', '=', keyId).executeTakeFirstOrThrow();
    const leases = await t.stores[0].db.selectFrom('credit_leases').select('amount_micros').where('key_id', '=', keyId).execute();
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
    const video: Hold = await t.credits[0].reserveDurable(p, 100_000);
    // Each instance draws 20 holds' worth (50,000): the stored balance is now 0.
    await chat(t.credits[0], p, 2_500, 20);
    await chat(t.credits[1], p, 2_500, 500);
    await Promise.all(t.credits.map((c) => c.flush()));
    expect(await stored(p.keyId)).toEqual({ balance: 0, owed: 0, leased: 100_000 - 20 - 500 });

    // The task cost 84,480 more than its hold. This instance's lease (49,980 unspent) pays at once.
    const settled = await t.credits[0].settle(video, 184_480);
    expect(settled).toEqual({ chargedMicros: 184_480, overageMicros: 84_480 - 49_980 });
    let s = await stored(p.keyId);
    expect(s).toEqual({ balance: 0, owed: 34_500, leased: 49_500 });
    neverBoth(s);

    // The other instance learns the key owes at its next write-back (here: after one more request)
    // and gives back what it has unheld, without waiting for its lease to go idle.
    await chat(t.credits[1], p, 100, 100);
    await eventually(async () => (await stored(p.keyId)).leased === 0, 5000, 'the other lease given back');
    s = await stored(p.keyId);
    // 200,000 − 184,480 − 20 − 500 − 100: all that is left, nothing owed.
    expect(s).toEqual({ balance: 14_900, owed: 0, leased: 0 });
    // And the key spends again.
    await chat(t.credits[1], p, 100, 50);
  });

  it('two instances: when the leases cannot cover it, the key owes exactly the shortfall and holds nothing', async () => {
    const p = await keyWith(200_000);
    const video: Hold = await t.credits[0].reserveDurable(p, 100_000);
    await chat(t.credits[0], p, 2_500, 20);
    await chat(t.credits[1], p, 2_500, 500);
    await t.credits[0].settle(video, 100_000 + 109_000);
    await Promise.all(t.books.map((b) => b.close()));
    const s = await stored(p.keyId);
    // 200,000 − 209,000 − 20 − 500 = −9,520: the real shortfall, with no balance beside it.
    expect(s).toEqual({ balance: 0, owed: 9_520, leased: 0 });
    // A top-up pays the debt first.
    await new ReservationsRepo(t.stores[0].db).topUp(p.keyId, 10_000);
    expect(await stored(p.keyId)).toEqual({ balance: 480, owed: 0, leased: 0 });
  });

  it('one instance holding the lease: its own lease covers the video settle; nothing is owed', async () => {
    const p = await keyWith(100_000);
    const video: Hold = await t.credits[0].reserveDurable(p, 60_000);
    // 20 × 2,000 = the whole remaining balance into this instance's lease.
    await chat(t.credits[0], p, 2_000, 1_000);
    await t.credits[0].flush();
    expect(await stored(p.keyId)).toEqual({ balance: 0, owed: 0, leased: 39_000 });
    expect(await t.credits[0].settle(video, 70_000)).toEqual({ chargedMicros: 70_000, overageMicros: 0 });
    const s = await stored(p.keyId);
    expect(s).toEqual({ balance: 29_000, owed: 0, leased: 0 });
    // Not refused: the key still has 29,000.
    await chat(t.credits[0], p, 1_000, 1_000);
  });

  it('a crashed instance’s lease returned by the sweep, and a released hold, pay the debt before the balance', async () => {
    const p = await keyWith(100_000);
    const video: Hold = await t.credits[0].reserveDurable(p, 30_000);
    const other: Hold = await t.credits[0].reserveDurable(p, 10_000);
    const dead = new LeaseBook(new LeasesRepo(t.stores[0].db), { ...options, ttlMs: 1000 });
    const h = await dead.reserve(p.keyId, 3_000);
    expect(h).not.toBeNull();
    dead.halt();
    expect(await stored(p.keyId)).toEqual({ balance: 0, owed: 0, leased: 60_000 });
    await t.credits[1].settle(video, 30_000 + 75_000);
    neverBoth(await stored(p.keyId));
    expect((await stored(p.keyId)).owed).toBe(75_000);
    // The released hold pays 10,000 of it.
    await t.credits[0].release(other);
    expect(await stored(p.keyId)).toEqual({ balance: 0, owed: 65_000, leased: 60_000 });
    // Past expiry and grace the dead lease returns: 60,000 pays what it can.
    expect(await new LeasesRepo(t.stores[0].db).sweepExpired(options.graceMs, Date.now() + 1000 + options.graceMs + 1)).toBe(1);
    expect(await stored(p.keyId)).toEqual({ balance: 0, owed: 5_000, leased: 0 });
  });
});

import type { Principal } from '../auth/principal.js';
import { errors } from '../http/errors.js';
import type { ReservationsRepo } from '../store/repos/reservations.js';
import type { LeasesRepo } from '../store/repos/leases.js';
import type { LeaseBook, LeaseHold } from './credit-lease.js';
import { creditRefusal, type FitHint } from './credit-refusal.js';

/**
 * Money held for one request or task: a reservation row (`reservationId`), or a hold in this
 * instance's lease of the key's balance (`lease`); neither for a key with unlimited credit.
 */
export interface Hold {
  keyId: string;
  reservationId: string | null;
  amountMicros: number;
  lease?: LeaseHold;
}

/** Where a key's money is: `balanceMicros` in the database, `leasedMicros` in instances' leases (part of what it may spend). */
export interface CreditAccount {
  balanceMicros: number | null;
  leasedMicros: number;
  overageMicros: number;
}

/** What a settle charged (the real cost) and the part of it the key now owes. */
export interface Settled {
  chargedMicros: number;
  overageMicros: number;
}

/**
 * reserve → settle | release. Reserve takes the estimated cost from the balance before any upstream
 * call (403 insufficient_quota when it cannot); settle charges the real cost and returns the rest;
 * release returns everything. Settle and release act once per hold, whoever calls them.
 */
export class CreditService {
  /**
   * Without `leases`, every hold is a reservation row (one instance's tests of the database path);
   * with them, request holds live in this instance's lease and only `reserveDurable` writes rows.
   */
  constructor(
    private readonly repo: ReservationsRepo,
    private readonly leases: { book: LeaseBook; repo: LeasesRepo } | null = null,
  ) {}

  /**
   * Holds the estimate of a request that ends within this process (chat, images): in memory from the
   * instance's lease when leases are on. `fit` says how the request could fit a positive balance
   * that is too small (see credit-refusal.ts).
   */
  async reserve(p: Principal, amountMicros: number, fit?: FitHint): Promise<Hold> {
    const amount = holdAmount(p, amountMicros);
    if (!p.limitedCredit) return { keyId: p.keyId, reservationId: null, amountMicros: amount };
    if (!this.leases) return this.reserveDurable(p, amountMicros, fit);
    const lease = await this.leases.book.reserve(p.keyId, amount);
    if (!lease) throw await this.refusal(p.keyId, amount, fit);
    return { keyId: p.keyId, reservationId: null, amountMicros: amount, lease };
  }

  /** Holds the estimate in a reservation row: for holds that outlive the request (video tasks). */
  async reserveDurable(p: Principal, amountMicros: number, fit?: FitHint): Promise<Hold> {
    const amount = holdAmount(p, amountMicros);
    if (!p.limitedCredit) return { keyId: p.keyId, reservationId: null, amountMicros: amount };
    const id = await this.repo.reserve(p.keyId, amount);
    if (!id) throw await this.refusal(p.keyId, amount, fit);
    return { keyId: p.keyId, reservationId: id, amountMicros: amount };
  }

  private async refusal(keyId: string, amount: number, fit?: FitHint) {
    const account = await this.repo.account(keyId);
    const local = this.leases?.book.view(keyId)?.availableMicros ?? 0;
    return creditRefusal(amount, (account?.balanceMicros ?? 0) + local, fit, account?.overageMicros ?? 0);
  }

  /** A key's money: balance, leased (by every instance, as last written back) and owed. Writes this instance's settled amounts first. */
  async account(keyId: string): Promise<CreditAccount | undefined> {
    await this.leases?.book.flush(keyId);
    const account = await this.repo.account(keyId);
    if (!account) return undefined;
    const leased = this.leases ? ((await this.leases.repo.leasedByKey(keyId)).get(keyId) ?? 0) : 0;
    return { balanceMicros: account.balanceMicros, leasedMicros: leased, overageMicros: account.overageMicros };
  }

  /** What the key may still spend: balance plus leases (null: unlimited; undefined: no such key). */
  async spendable(keyId: string): Promise<number | null | undefined> {
    const a = await this.account(keyId);
    return a && (a.balanceMicros === null ? null : a.balanceMicros + a.leasedMicros);
  }

  /** Open holds of the key: reservation rows plus this instance's in-memory holds. */
  async heldCount(keyId: string): Promise<number> {
    return (await this.repo.heldCount(keyId)) + (this.leases?.book.view(keyId)?.holds ?? 0);
  }

  /** Writes this instance's settled amounts (all keys) to the database now. */
  flush(): Promise<void> {
    return this.leases?.book.flush() ?? Promise.resolve();
  }

  /** Shutdown: every lease written back and returned. */
  async close(): Promise<void> {
    await this.leases?.book.close();
  }

  /**
   * Charges the real `costMicros` in full: what the hold does not cover comes from the balance, and
   * what the balance cannot cover is the key's overage (owed). Returns both for the ledger row, or
   * null when the hold was already closed.
   */
  async settle(hold: Hold | { reservationId: string | null }, costMicros: number): Promise<Settled | null> {
    // An unknown cost (NaN) charges what was held: the estimate the request was admitted with.
    const cost = Number.isNaN(costMicros) ? NaN : Math.min(Number.MAX_SAFE_INTEGER, Math.max(0, Math.ceil(costMicros)));
    if ('lease' in hold && hold.lease) {
      const h = hold.lease;
      // Each hold closes once: a second settle or release finds it taken.
      hold.lease = undefined;
      const charge = Number.isNaN(cost) ? h.amount : cost;
      return { chargedMicros: charge, overageMicros: await this.leases!.book.settle(h, charge) };
    }
    if (!hold.reservationId) return { chargedMicros: Number.isNaN(cost) ? ('amountMicros' in hold ? hold.amountMicros : 0) : cost, overageMicros: 0 };
    const r = await this.repo.settle(hold.reservationId, cost);
    if (!r.closed) return null;
    return { chargedMicros: r.chargedMicros, overageMicros: r.overageMicros > 0 ? await this.owedAfterLease(r.keyId, r.overageMicros) : 0 };
  }

  /**
   * A reservation's settle left `owed` that the stored balance could not cover, while this
   * instance may hold a lease of the key's money: the lease goes back first and pays it. Returns
   * the part of `owed` still owed after that (other instances' leases pay the rest as they return).
   */
  private async owedAfterLease(keyId: string, owed: number): Promise<number> {
    // The settle is done: a give-back that fails now is left to the lease's next write-back (the
    // key owes, so it gives back what it has), and the settle still answers for its ledger row.
    const still = await this.leases?.book.payOwed(keyId).catch(() => undefined);
    return still === undefined ? owed : Math.min(owed, still);
  }

  /**
   * Charges a cost that has no hold any more (a video task the provider finished after the gateway
   * gave up on it and released its hold): from the balance, the rest owed.
   */
  async chargeWithoutHold(keyId: string, costMicros: number): Promise<Settled> {
    const cost = Number.isFinite(costMicros) ? Math.max(0, Math.ceil(costMicros)) : 0;
    const owed = await this.repo.charge(keyId, cost);
    return { chargedMicros: cost, overageMicros: owed > 0 ? await this.owedAfterLease(keyId, owed) : 0 };
  }

  /** Returns the held amount; true when this call closed the hold. */
  async release(hold: Hold | { reservationId: string | null }): Promise<boolean> {
    if ('lease' in hold && hold.lease) {
      this.leases!.book.release(hold.lease);
      hold.lease = undefined;
      return true;
    }
    if (!hold.reservationId) return true;
    return (await this.repo.release(hold.reservationId)).closed;
  }

  /**
   * Releases holds older than `maxAgeMs` that belong to no task (a request whose process died
   * before settle). Safe on every instance at once: each release is guarded. Returns how many.
   */
  async releaseAbandoned(maxAgeMs: number, now = Date.now()): Promise<number> {
    let released = 0;
    for (const id of await this.repo.abandoned(now - maxAgeMs)) if ((await this.repo.release(id, now)).closed) released++;
    return released;
  }
}

/** A NaN estimate (a pricing bug) holds nothing, the settle still charges; an amount beyond exact integers can never be covered. */
function holdAmount(p: Principal, amountMicros: number): number {
  const amount = Number.isNaN(amountMicros) ? 0 : Math.max(0, Math.ceil(amountMicros));
  if (amount > Number.MAX_SAFE_INTEGER && p.limitedCredit) throw errors.insufficientQuota();
  return amount;
}

import type { Principal } from '../auth/principal.js';
import { errors } from '../http/errors.js';
import type { ReservationsRepo } from '../store/repos/reservations.js';
import { creditRefusal, type FitHint } from './credit-refusal.js';

/** Money held for one request or task; `reservationId` is null for a key with unlimited credit. */
export interface Hold {
  keyId: string;
  reservationId: string | null;
  amountMicros: number;
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
  constructor(private readonly repo: ReservationsRepo) {}

  /** `fit` says how the request could fit a positive balance that is too small (see credit-refusal.ts). */
  async reserve(p: Principal, amountMicros: number, fit?: FitHint): Promise<Hold> {
    // A NaN estimate (a pricing bug) holds nothing, the settle still charges; an amount beyond
    // exact integers can never be covered.
    const amount = Number.isNaN(amountMicros) ? 0 : Math.max(0, Math.ceil(amountMicros));
    if (amount > Number.MAX_SAFE_INTEGER && p.limitedCredit) throw errors.insufficientQuota();
    if (!p.limitedCredit) return { keyId: p.keyId, reservationId: null, amountMicros: amount };
    const id = await this.repo.reserve(p.keyId, amount);
    if (!id) {
      const account = await this.repo.account(p.keyId);
      throw creditRefusal(amount, account?.balanceMicros ?? 0, fit, account?.overageMicros ?? 0);
    }
    return { keyId: p.keyId, reservationId: id, amountMicros: amount };
  }

  /**
   * Charges the real `costMicros` in full: what the hold does not cover comes from the balance, and
   * what the balance cannot cover is the key's overage (owed). Returns both for the ledger row, or
   * null when the hold was already closed.
   */
  async settle(hold: Hold | { reservationId: string | null }, costMicros: number): Promise<Settled | null> {
    // An unknown cost (NaN) charges what was held: the estimate the request was admitted with.
    const cost = Number.isNaN(costMicros) ? NaN : Math.min(Number.MAX_SAFE_INTEGER, Math.max(0, Math.ceil(costMicros)));
    if (!hold.reservationId) return { chargedMicros: Number.isNaN(cost) ? ('amountMicros' in hold ? hold.amountMicros : 0) : cost, overageMicros: 0 };
    const r = await this.repo.settle(hold.reservationId, cost);
    return r.closed ? { chargedMicros: r.chargedMicros, overageMicros: r.overageMicros } : null;
  }

  /** Returns the held amount; true when this call closed the hold. */
  async release(hold: Hold | { reservationId: string | null }): Promise<boolean> {
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

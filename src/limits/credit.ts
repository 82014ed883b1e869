import { inSpan, sampled, type TraceParent } from '../telemetry/trace.js';
import type { BudgetRule, Principal } from '../auth/principal.js';
import { errors } from '../http/errors.js';
import type { ReservationsRepo } from '../store/repos/reservations.js';
import { budgetCharges, budgetRefusal, priceRatioOf } from './budgets.js';
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
  /** The price ratio the hold was taken with; its settle charges with the same. */
  ratio?: number;
  /** Tracing: the request's server span, parent of the hold's settle or release span. */
  trace?: TraceParent | null;
}

/** A hold known by its reservation only (a video task's): the key tells the price ratio at settle. */
export interface StoredHold {
  reservationId: string | null;
  keyId?: string;
  /** The trace its settle or release joins (a video task's), when it is sampled. */
  trace?: TraceParent | null;
}

export interface CreditOptions {
  /** The clock budget windows are read by (tests move it). */
  now?: () => number;
  /** The IANA time zone calendar budget windows follow (read per hold: a config reload may change it). */
  timeZone?: string | (() => string);
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
  /** Sees every settle that closed a hold (the metrics' money counters). */
  onSettled: ((chargedMicros: number, overageMicros: number) => void) | null = null;
  /**
   * Without `leases`, every hold is a reservation row (one instance's tests of the database path);
   * with them, request holds live in this instance's lease and only `reserveDurable` writes rows.
   */
  private readonly now: () => number;
  private readonly timeZone: () => string;

  constructor(
    private readonly repo: ReservationsRepo,
    private readonly leases: { book: LeaseBook; repo: LeasesRepo } | null = null,
    opts: CreditOptions = {},
  ) {
    this.now = opts.now ?? Date.now;
    const zone = opts.timeZone ?? 'UTC';
    this.timeZone = typeof zone === 'string' ? () => zone : zone;
  }

  /**
   * Holds the estimate of a request that ends within this process (chat, images): in memory from the
   * instance's lease when leases are on. `fit` says how the request could fit a positive balance
   * that is too small (see credit-refusal.ts).
   */
  reserve(p: Principal, amountMicros: number, fit?: FitHint, trace?: TraceParent | null): Promise<Hold> {
    if (!sampled(trace)) return this.reserveNow(p, amountMicros, fit);
    return inSpan(trace, 'credit.hold', { attributes: { 'mediagate.key_id': p.keyId, 'mediagate.credit.hold_usd': amountMicros / 1e6 } }, async () => withTrace(await this.reserveNow(p, amountMicros, fit), trace));
  }

  private async reserveNow(p: Principal, amountMicros: number, fit?: FitHint): Promise<Hold> {
    // A budgeted key's holds are reservation rows: the budget is kept in the database, shared by every instance.
    if (!this.leases || p.budgets?.length) return this.reserveRow(p, amountMicros, fit);
    const ratio = priceRatioOf(p);
    const amount = holdAmount(p, amountMicros * ratio);
    if (!p.limitedCredit) return { keyId: p.keyId, reservationId: null, amountMicros: amount, ratio };
    const lease = await this.leases.book.reserve(p.keyId, amount);
    if (!lease) throw await this.refusal(p.keyId, amount, fit, ratio);
    return { keyId: p.keyId, reservationId: null, amountMicros: amount, lease, ratio };
  }

  /** Holds the estimate in a reservation row: for holds that outlive the request (video tasks). */
  reserveDurable(p: Principal, amountMicros: number, fit?: FitHint, trace?: TraceParent | null): Promise<Hold> {
    if (!sampled(trace)) return this.reserveRow(p, amountMicros, fit);
    return inSpan(trace, 'credit.hold', { attributes: { 'mediagate.key_id': p.keyId, 'mediagate.credit.hold_usd': amountMicros / 1e6, 'mediagate.credit.durable': true } }, async () => withTrace(await this.reserveRow(p, amountMicros, fit), trace));
  }

  /**
   * Holds the estimate (times the key's price ratio) in a reservation row, against the balance and
   * every budget of the key: for holds that outlive the request, and for budgeted keys.
   */
  private async reserveRow(p: Principal, amountMicros: number, fit?: FitHint): Promise<Hold> {
    const ratio = priceRatioOf(p);
    const amount = holdAmount(p, amountMicros * ratio);
    const budgets = p.budgets?.length ? budgetCharges(p.budgets, this.now(), this.timeZone()) : [];
    if (!p.limitedCredit && !budgets.length) return { keyId: p.keyId, reservationId: null, amountMicros: amount, ratio };
    const r = await this.repo.reserveWithin(p.keyId, amount, { limitedCredit: p.limitedCredit, budgets }, this.now());
    if ('short' in r) throw r.short === 'budget' ? budgetRefusal(r.budget, r.usedMicros, amount) : await this.refusal(p.keyId, amount, fit, ratio);
    return { keyId: p.keyId, reservationId: r.id, amountMicros: amount, ratio };
  }

  private async refusal(keyId: string, amount: number, fit?: FitHint, ratio = 1) {
    const account = await this.repo.account(keyId);
    const local = this.leases?.book.view(keyId)?.availableMicros ?? 0;
    // The hint reasons in list prices: the balance it is given is what that buys at the key's ratio.
    const hint = fit && ratio !== 1 ? (balance: number) => (ratio > 0 ? fit(Math.floor(balance / ratio)) : undefined) : fit;
    return creditRefusal(amount, (account?.balanceMicros ?? 0) + local, hint, account?.overageMicros ?? 0);
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
  settle(hold: Hold | StoredHold, costMicros: number): Promise<Settled | null> {
    const trace = hold.trace ?? null;
    if (!sampled(trace)) return this.settleCounted(hold, costMicros);
    return inSpan(trace, 'credit.settle', { attributes: { 'mediagate.cost_usd': costMicros / 1e6 } }, async (span) => {
      const settled = await this.settleCounted(hold, costMicros);
      span?.setAttribute('mediagate.credit.charged_usd', (settled?.chargedMicros ?? 0) / 1e6);
      if (settled?.overageMicros) span?.setAttribute('mediagate.credit.overage_usd', settled.overageMicros / 1e6);
      return settled;
    });
  }

  private async settleCounted(hold: Hold | StoredHold, costMicros: number): Promise<Settled | null> {
    const settled = await this.settleNow(hold, costMicros);
    if (settled && this.onSettled) this.onSettled(settled.chargedMicros, settled.overageMicros);
    return settled;
  }

  private async settleNow(hold: Hold | StoredHold, costMicros: number): Promise<Settled | null> {
    // The price ratio applies here, where every cost reaches the balance, the budgets and the ledger.
    const ratio = 'ratio' in hold && hold.ratio !== undefined ? hold.ratio : hold.keyId ? await this.repo.priceRatio(hold.keyId) : 1;
    // An unknown cost (NaN) charges what was held: the estimate the request was admitted with.
    const cost = Number.isNaN(costMicros) ? NaN : Math.min(Number.MAX_SAFE_INTEGER, Math.max(0, Math.ceil(costMicros * ratio)));
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
    // The key's price ratio applies, and the cost counts as spent in its budgets' current windows.
    const terms = await this.repo.termsOf(keyId);
    const cost = Number.isFinite(costMicros) ? Math.max(0, Math.ceil(costMicros * terms.ratio)) : 0;
    const now = this.now();
    const owed = await this.repo.charge(keyId, cost, budgetCharges(terms.budgets as BudgetRule[], now, this.timeZone()), now);
    return { chargedMicros: cost, overageMicros: owed > 0 ? await this.owedAfterLease(keyId, owed) : 0 };
  }

  /** Returns the held amount; true when this call closed the hold. */
  release(hold: Hold | StoredHold): Promise<boolean> {
    const trace = hold.trace ?? null;
    if (!sampled(trace)) return this.releaseNow(hold);
    return inSpan(trace, 'credit.release', {}, () => this.releaseNow(hold));
  }

  private async releaseNow(hold: Hold | StoredHold): Promise<boolean> {
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

/** The hold, told the trace its settle or release spans join. */
function withTrace(hold: Hold, trace: TraceParent): Hold {
  hold.trace = trace;
  return hold;
}

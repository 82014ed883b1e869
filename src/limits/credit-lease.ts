import { LeaseBookBase } from './lease-book.js';
import { randomBase62 } from '../ids.js';
import type { LeasesRepo } from '../store/repos/leases.js';

// Credit leases: per-request database writes for credit were what held the chat path back (a
// reserve and a settle transaction each). Instead each instance draws part of a key's balance into
// memory with one guarded UPDATE, reserves and settles against it in memory, and writes what it
// spent back in batches. The database always knows each instance's lease (credit_leases), so the
// balance plus the leases is what the key may still spend, and a lease nobody renews returns.
//
// Invariants (test/credit-leases.test.ts, test/credit-lease-instances.test.ts):
// - a draw never takes more than the stored balance (guarded UPDATE in the draw's transaction);
// - a hold is admitted only from this instance's unspent lease, so across instances the holds
//   never exceed balance + leases: a key cannot be overdrawn by parallel instances;
// - a real cost above its hold takes from the lease, then from the balance, then is owed
//   (the overage of docs/limits.md);
// - money coming back to the key pays what it owes first (creditBack), and a lease whose key owes
//   is given back at its next write-back: a key never both has money and owes;
// - a crashed instance's lease returns to the balance after it expired (sweepExpired);
// - settled amounts reach the database within `flushMs` (after the ledger rows of their requests),
//   at shutdown, and before any draw.

export interface LeaseOptions {
  /** A lease not renewed for this long may be returned by any instance (after `graceMs` more). */
  ttlMs: number;
  /** Settled amounts are written back at most this long after the settle. */
  flushMs: number;
  /** A lease unused this long (and holding nothing) goes back to the balance. */
  idleMs: number;
  /** Slack past expires_at before another instance returns a lease (clock skew between hosts). */
  graceMs: number;
  /** A draw takes the larger of `requests` × the asking hold and `fraction` × the balance, never more than the balance. */
  requests: number;
  fraction: number;
}

export const DEFAULT_LEASE_OPTIONS: LeaseOptions = { ttlMs: 30_000, flushMs: 250, idleMs: 10_000, graceMs: 10_000, requests: 20, fraction: 0.01 };

interface Lease {
  readonly keyId: string;
  readonly id: string;
  /** Drawn, not held, not spent: what new holds may take. */
  available: number;
  /** Sum and number of the open holds. */
  held: number;
  holds: number;
  /** Settled since the last write-back. */
  spent: number;
  /** Holds are admitted only until then (renewed by every draw and write-back). */
  validUntil: number;
  /** The key owes money (as the database last said): no holds; the unheld lease goes back to pay it. */
  owes: boolean;
  /** No database answer seen yet for this key in this process. */
  fresh: boolean;
  lastUse: number;
  /** Every database operation of a lease runs in this chain, one at a time, so local state and the row never disagree. */
  io: Promise<unknown>;
}

/** A hold taken from a lease. */
export interface LeaseHold {
  lease: Lease;
  amount: number;
}

export interface LeaseView {
  /** Unspent, not held, in this instance. */
  availableMicros: number;
  heldMicros: number;
  holds: number;
  /** Settled here, not yet written back. */
  pendingMicros: number;
}

export class LeaseBook extends LeaseBookBase<Lease> {
  readonly instance = `inst_${randomBase62(12)}`;
  private readonly leases = new Map<string, Lease>();

  constructor(
    private readonly repo: LeasesRepo,
    private readonly opts: LeaseOptions = DEFAULT_LEASE_OPTIONS,
    onError: (err: unknown) => void = () => {},
    /**
     * What must be in the database before settled amounts are: the usage ledger's rows (and the
     * Idempotency-Key answers written with them), so an instance that dies never leaves a charge
     * whose row and kept answer are lost (a client's retry would then be charged again).
     */
    private readonly settledFirst: () => Promise<void> = async () => {},
  ) {
    super(repo, opts, onError);
  }

  private lease(keyId: string): Lease {
    let l = this.leases.get(keyId);
    if (!l) {
      l = { keyId, id: `${this.instance}/${keyId}`, available: 0, held: 0, holds: 0, spent: 0, validUntil: 0, owes: false, fresh: true, lastUse: 0, io: Promise.resolve() };
      this.leases.set(keyId, l);
    }
    return l;
  }

  /** Holds `amount` from the key's lease, drawing more when it is short. null: the key cannot cover it. */
  async reserve(keyId: string, amount: number): Promise<LeaseHold | null> {
    const l = this.lease(keyId);
    const now = Date.now();
    l.lastUse = now;
    if (this.take(l, amount, now)) return { lease: l, amount };
    // Short, stale or not yet known: one draw (queued behind any operation already running).
    await this.run(l, () => this.draw(l, amount));
    return this.take(l, amount) ? { lease: l, amount } : null;
  }

  private take(l: Lease, amount: number, now = Date.now()): boolean {
    if (l.fresh || l.owes || now >= l.validUntil || l.available < amount) return false;
    l.available -= amount;
    l.held += amount;
    l.holds++;
    return true;
  }

  private async draw(l: Lease, amount: number): Promise<void> {
    if (this.closed) return;
    // Another draw may have run while this one waited in the chain.
    if (!l.fresh && !l.owes && Date.now() < l.validUntil && l.available >= amount) return;
    const started = Date.now();
    // Settled amounts first (after the ledger's rows of their requests), so the balance the draw
    // reads is current; a stale lease is renewed (or found returned, then its local amount is void).
    if (l.spent > 0 || (started >= l.validUntil && l.available > 0)) await this.writeBack(l, false);
    const need = Math.max(0, amount - l.available);
    const want = (balance: number) => Math.max(this.opts.requests * amount, Math.ceil(balance * this.opts.fraction));
    const r = await this.repo.draw(l.id, l.keyId, this.instance, want, need, this.opts.ttlMs, started);
    l.fresh = false;
    l.owes = r.overage > 0;
    if (r.drawn > 0) l.available += r.drawn;
    // A hold of nothing needs no money, only a key that owes nothing.
    if (r.drawn > 0 || (need === 0 && !l.owes)) l.validUntil = Math.max(l.validUntil, started + this.opts.ttlMs);
  }

  /**
   * Writes settled amounts back and renews the lease; `close` gives everything unheld back and ends
   * it. `background` (the timer's write-backs): never waits for a SQLite write lock; a failed write
   * keeps its amounts here for the next one.
   */
  private async writeBack(l: Lease, close: boolean, background = false): Promise<number> {
    const spent = l.spent;
    const give = close ? l.available : 0;
    l.spent = 0;
    l.available -= give;
    const started = Date.now();
    try {
      // The rows of these settles were recorded when they settled: written before the amounts.
      if (spent > 0) await this.settledFirst();
      const r = await this.repo.writeBack(l.id, l.keyId, spent, give, this.opts.ttlMs, close && l.holds === 0, started, background);
      this.unavailableReported = false;
      l.fresh = false;
      l.owes = r.overage > 0;
      if (r.lost) {
        // The lease expired and was returned to the balance (this instance could not renew it in
        // time); what was spent has now been charged to the balance directly.
        l.available = 0;
        l.validUntil = 0;
      } else l.validUntil = close && l.holds === 0 ? 0 : started + this.opts.ttlMs;
      return r.overage;
    } catch (err) {
      l.spent += spent;
      l.available += give;
      throw err;
    }
  }

  /**
   * Charges `cost` for a hold: the rest of the hold returns to the lease; a cost above it takes from
   * the lease, then from the balance, and what neither covers is owed. Returns the owed part.
   */
  async settle(h: LeaseHold, cost: number): Promise<number> {
    const l = h.lease;
    l.held -= h.amount;
    l.holds--;
    if (cost <= h.amount) {
      l.available += h.amount - cost;
      l.spent += cost;
      return 0;
    }
    const extra = cost - h.amount;
    const take = Math.min(Math.max(0, l.available), extra);
    l.available -= take;
    l.spent += h.amount + take;
    if (extra === take) return 0;
    const owed = await this.run(l, () => this.repo.chargeBeyondLease(l.keyId, extra - take));
    if (owed > 0) l.owes = true;
    return owed;
  }

  release(h: LeaseHold): void {
    h.lease.held -= h.amount;
    h.lease.holds--;
    h.lease.available += h.amount;
  }

  protected async tick(): Promise<void> {
    const now = Date.now();
    for (const l of this.leases.values()) {
      const idle = l.holds === 0 && now - l.lastUse > this.opts.idleMs && (l.available > 0 || l.spent > 0 || l.validUntil > 0);
      const renew = l.validUntil > 0 && l.validUntil - now < this.opts.ttlMs / 2;
      // A key that owes takes no holds: what its lease has unheld pays the debt instead.
      const giveBack = idle || (l.owes && l.available > 0);
      if (l.spent > 0 || giveBack || renew) {
        this.run(l, () => this.writeBack(l, giveBack, true)).catch((err) => this.backgroundFailed(err));
      }
    }
  }

  /**
   * The key was found owing (a video task cost more than its hold and the balance): this instance's
   * unheld lease goes back now, paying the debt as far as it goes. Returns what the key still owes,
   * or undefined when this instance has no lease of the key to give.
   */
  async payOwed(keyId: string): Promise<number | undefined> {
    const l = this.leases.get(keyId);
    if (!l || this.closed) return undefined;
    // No more holds meanwhile; should the write below fail, the timer's next write-back gives back.
    l.owes = true;
    return this.run(l, async () => (l.available > 0 || l.spent > 0 ? this.writeBack(l, true) : undefined));
  }

  /**
   * Gives this instance's unheld lease of the key back to the balance: a hold that must be a
   * reservation row (a budget near its limit) then finds all of the key's money in the balance.
   */
  async giveBack(keyId: string): Promise<void> {
    const l = this.leases.get(keyId);
    if (!l || this.closed || (l.available <= 0 && l.spent <= 0)) return;
    await this.run(l, async () => (l.available > 0 || l.spent > 0 ? void (await this.writeBack(l, true)) : undefined));
  }

  /** Writes everything settled so far (tests and `keys list` read the database after it). */
  async flush(keyId?: string): Promise<void> {
    const targets = keyId ? [this.leases.get(keyId)].filter((l): l is Lease => !!l) : [...this.leases.values()];
    // Queued behind any write already running (it may hold amounts this call must see written).
    await Promise.all(targets.map((l) => this.run(l, async () => (l.spent > 0 ? void (await this.writeBack(l, false)) : undefined))));
  }

  /** Shutdown: writes back and returns every lease (a lease with holds still open stays until its expiry). */
  async close(): Promise<void> {
    this.halt();
    await Promise.all([...this.leases.values()].map((l) => this.run(l, () => this.writeBack(l, true)).catch(this.onError)));
  }

  view(keyId: string): LeaseView | undefined {
    const l = this.leases.get(keyId);
    return l && { availableMicros: l.available, heldMicros: l.held, holds: l.holds, pendingMicros: l.spent };
  }
}

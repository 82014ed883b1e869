import { LeaseBookBase } from './lease-book.js';
import type { BudgetLeasesRepo } from '../store/repos/budget-leases.js';
import type { BudgetCharge } from '../store/repos/reservations.js';
import type { LeaseOptions } from './credit-lease.js';

// Budget leases, the budget's counterpart of the credit lease: a reservation row per request (a
// transaction to hold, another to settle) was what a budgeted key cost. Instead the instance takes
// a share of a budget window's room into memory (counted as held in the window row, so no other
// holder can pass the limit) and admits holds against it without a database write.
//
// Exactness near the limit: a window whose room is under `requests` holds of the asking size is
// "near". Then the lease's unheld part goes back and, for `nearMs`, the window's holds are
// reservation rows again (CreditService), whose guarded UPDATE admits exactly up to the budget.
// This process's own lease can then hold no unheld room when a row is refused; the lease is used
// only where one process serves the database (a SQLite file), so no other instance's lease can.

export interface BudgetLeaseOptions extends LeaseOptions {
  /** After a window was found near its limit, its holds are reservation rows for this long. */
  nearMs: number;
}

export const DEFAULT_BUDGET_LEASE_OPTIONS: Omit<BudgetLeaseOptions, keyof LeaseOptions> = { nearMs: 1000 };

interface WindowLease {
  readonly id: string;
  /** The window as last asked for (its limit may change with the key's or project's budget). */
  b: BudgetCharge;
  /** Taken, not held, not used: what new holds may take. */
  available: number;
  held: number;
  holds: number;
  /** Of the lease's amount, settled since the last write-back. */
  used: number;
  /** Charged since the last write-back (more than `used` when a cost passed its hold and the lease). */
  spent: number;
  /** The key whose settle was last counted (named by a threshold alert). */
  keyId: string;
  validUntil: number;
  /** No draws before then: the window is near its limit. */
  nearUntil: number;
  fresh: boolean;
  lastUse: number;
  /** The lease's database operations, one at a time. */
  io: Promise<unknown>;
}

/** A hold in one lease per budget window of the request. */
export interface BudgetLeaseHold {
  leases: WindowLease[];
  amount: number;
}

export class BudgetLeaseBook extends LeaseBookBase<WindowLease> {
  private readonly leases = new Map<string, WindowLease>();

  constructor(
    private readonly repo: BudgetLeasesRepo,
    readonly instance: string,
    private readonly opts: BudgetLeaseOptions,
    onError: (err: unknown) => void = () => {},
  ) {
    super(repo, opts, onError);
  }

  private lease(b: BudgetCharge): WindowLease {
    const name = `${b.scope}/${b.start}`;
    let l = this.leases.get(name);
    if (!l) {
      l = { id: `${this.instance}/${name}`, b, available: 0, held: 0, holds: 0, used: 0, spent: 0, keyId: '', validUntil: 0, nearUntil: 0, fresh: true, lastUse: 0, io: Promise.resolve() };
      this.leases.set(name, l);
    }
    return l;
  }

  private ready(l: WindowLease, b: BudgetCharge, amount: number, now: number): boolean {
    return !l.fresh && now < l.validUntil && l.available >= amount && l.b.limitMicros === b.limitMicros;
  }

  /**
   * Holds `amount` in every window of `charges`, drawing where a lease is short. null: a window is
   * near its limit (nothing is held; the caller holds in a reservation row instead).
   */
  async reserve(charges: readonly BudgetCharge[], amount: number): Promise<BudgetLeaseHold | null> {
    const now = Date.now();
    const ls = charges.map((b) => this.lease(b));
    let quick = true;
    for (let i = 0; i < ls.length; i++) {
      ls[i].lastUse = now;
      if (!this.ready(ls[i], charges[i], amount, now)) quick = false;
    }
    if (quick) {
      for (const l of ls) this.take(l, amount);
      return { leases: ls, amount };
    }
    const taken: WindowLease[] = [];
    for (let i = 0; i < ls.length; i++) {
      const l = ls[i];
      if (!this.ready(l, charges[i], amount, Date.now())) await this.run(l, () => this.draw(l, charges[i], amount));
      if (!this.ready(l, charges[i], amount, Date.now())) {
        this.release({ leases: taken, amount });
        return null;
      }
      this.take(l, amount);
      taken.push(l);
    }
    return { leases: taken, amount };
  }

  private take(l: WindowLease, amount: number): void {
    l.available -= amount;
    l.held += amount;
    l.holds++;
  }

  private async draw(l: WindowLease, b: BudgetCharge, amount: number): Promise<void> {
    if (this.closed) return;
    let now = Date.now();
    if (this.ready(l, b, amount, now)) return;
    if (l.b.limitMicros !== b.limitMicros) {
      // The budget was changed: what the lease took under the old one goes back first.
      if (l.available > 0 || l.used > 0 || l.spent > 0) await this.writeBack(l, true);
      l.b = b;
    }
    if (now < l.nearUntil) return;
    // Spend reported first (renewing the lease), so the room the draw reads is current.
    if (l.used > 0 || l.spent > 0 || (now >= l.validUntil && l.available > 0)) await this.writeBack(l, false);
    now = Date.now();
    if (this.ready(l, b, amount, now)) return;
    const need = Math.max(0, amount - l.available);
    const want = (room: number) => Math.max(this.opts.requests * amount, Math.floor(room * this.opts.fraction));
    const r = await this.repo.draw(l.id, l.b, this.instance, want, need, this.opts.ttlMs, now);
    l.fresh = false;
    if (r.drawn > 0) {
      l.available += r.drawn;
      l.validUntil = now + this.opts.ttlMs;
      return;
    }
    // Fewer than `requests` such holds fit: near the limit. The unheld part goes back, so the
    // reservation rows that hold from now on see all the room there is.
    l.nearUntil = Date.now() + this.opts.nearMs;
    if (l.available > 0) await this.writeBack(l, true);
  }

  /**
   * A reservation row was refused by this window: gives this instance's unheld part of it back and
   * keeps the window on rows for a while. True when there was something to give (worth a retry).
   */
  async giveBack(b: BudgetCharge): Promise<boolean> {
    const l = this.leases.get(`${b.scope}/${b.start}`);
    if (!l || this.closed) return false;
    l.nearUntil = Date.now() + this.opts.nearMs;
    return this.run(l, async () => {
      if (l.available <= 0) return false;
      await this.writeBack(l, true);
      return true;
    });
  }

  settle(h: BudgetLeaseHold, cost: number, keyId: string): void {
    for (const l of h.leases) {
      l.held -= h.amount;
      l.holds--;
      l.spent += cost;
      l.keyId = keyId;
      if (cost <= h.amount) {
        l.available += h.amount - cost;
        l.used += cost;
      } else {
        // Beyond its hold: from the lease's room as far as it goes; the rest is spend past the lease.
        const take = Math.min(Math.max(0, l.available), cost - h.amount);
        l.available -= take;
        l.used += h.amount + take;
      }
    }
  }

  release(h: BudgetLeaseHold): void {
    for (const l of h.leases) {
      l.held -= h.amount;
      l.holds--;
      l.available += h.amount;
    }
  }

  private async writeBack(l: WindowLease, close: boolean, background = false): Promise<void> {
    const m = { used: l.used, spent: l.spent, give: close ? l.available : 0, keyId: l.keyId };
    l.used = 0;
    l.spent = 0;
    l.available -= m.give;
    const now = Date.now();
    const end = close && l.holds === 0;
    try {
      const r = await this.repo.writeBack(l.id, l.b, m, this.opts.ttlMs, end, now, background);
      this.unavailableReported = false;
      l.fresh = false;
      if (r.lost) {
        l.available = 0;
        l.validUntil = 0;
      } else l.validUntil = end ? 0 : now + this.opts.ttlMs;
    } catch (err) {
      l.used += m.used;
      l.spent += m.spent;
      l.available += m.give;
      throw err;
    }
  }

  protected tick(): void {
    const now = Date.now();
    for (const [name, l] of this.leases) {
      const idle = l.holds === 0 && now - l.lastUse > this.opts.idleMs;
      const renew = l.validUntil > 0 && l.validUntil - now < this.opts.ttlMs / 2;
      const giveBack = idle || (now < l.nearUntil && l.available > 0);
      if (l.used > 0 || l.spent > 0 || (giveBack && (l.available > 0 || l.validUntil > 0)) || renew) {
        this.run(l, () => this.writeBack(l, giveBack, true)).catch((err) => this.backgroundFailed(err));
      } else if (idle && l.validUntil === 0 && now >= l.nearUntil) {
        // Nothing held, nothing owed to the database: a past window's lease is forgotten.
        this.leases.delete(name);
      }
    }
  }

  /** Writes every settle so far (tests and views read the database after it). */
  async flush(): Promise<void> {
    await Promise.all([...this.leases.values()].map((l) => this.run(l, async () => (l.used > 0 || l.spent > 0 ? this.writeBack(l, false) : undefined))));
  }

  /** Shutdown: every lease written back and returned (one with holds still open stays until it expires). */
  async close(): Promise<void> {
    this.halt();
    await Promise.all([...this.leases.values()].map((l) => this.run(l, () => this.writeBack(l, true)).catch(this.onError)));
  }

  /** This instance's lease of a window: unheld, held, pending spend. */
  view(scope: string, start: number): { availableMicros: number; heldMicros: number; pendingMicros: number } | undefined {
    const l = this.leases.get(`${scope}/${start}`);
    return l && { availableMicros: l.available, heldMicros: l.held, pendingMicros: l.spent };
  }
}

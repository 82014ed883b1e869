import { isDatabaseUnavailable } from '../store/unavailable.js';

// What the credit lease book (credit-lease.ts) and the budget lease book (budget-lease.ts) share:
// the write-back timer, the sweep that returns expired leases, one database operation at a time per
// lease, and how a failure in the background is told.

/** The timings both books read (LeaseOptions has them all). */
export interface LeaseTimings {
  flushMs: number;
  graceMs: number;
  ttlMs: number;
}

export abstract class LeaseBookBase<L extends { io: Promise<unknown> }> {
  private readonly timer: NodeJS.Timeout;
  private readonly sweeper: NodeJS.Timeout;
  protected closed = false;
  /** A background write found the database unavailable and said so; quiet until one succeeds. */
  protected unavailableReported = false;

  constructor(
    repo: { sweepExpired(graceMs: number, now: number, background: boolean): Promise<unknown> },
    opts: LeaseTimings,
    protected readonly onError: (err: unknown) => void,
  ) {
    this.timer = setInterval(() => void this.tick(), opts.flushMs);
    this.timer.unref();
    this.sweeper = setInterval(() => void repo.sweepExpired(opts.graceMs, Date.now(), true).catch((err) => this.backgroundFailed(err)), Math.max(1000, Math.floor(opts.ttlMs / 3)));
    this.sweeper.unref();
  }

  /** Every flushMs: write-backs, renewals, idle leases returned. */
  protected abstract tick(): void | Promise<void>;

  /** Runs `op` after the lease's operations already queued. */
  protected run<T>(l: L, op: () => Promise<T>): Promise<T> {
    const next = l.io.then(op, op);
    l.io = next.catch(() => undefined);
    return next;
  }

  /** A background write failed: reported, but a database that stays away only once until a write succeeds (they run every flushMs). */
  protected backgroundFailed(err: unknown): void {
    if (isDatabaseUnavailable(err)) {
      if (this.unavailableReported) return;
      this.unavailableReported = true;
    }
    this.onError(err);
  }

  /** Stops the timers without writing anything back: what a crash leaves behind (tests). */
  halt(): void {
    this.closed = true;
    clearInterval(this.timer);
    clearInterval(this.sweeper);
  }
}

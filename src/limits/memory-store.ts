import type { LimitStore, Slot, WindowResult } from './limit-store.js';

/** One fixed window of one bucket: requests counted in it and when it ends. */
interface Window {
  count: number;
  endsAt: number;
}

/** How often windows that ended are dropped (a bucket per key and per model: few, but unbounded over time). */
const SWEEP_EVERY_MS = 60_000;
/** Window ids kept (one per bucket in use: keys and models); past it the memo starts again. */
const MAX_KEPT_IDS = 10_000;

/**
 * Limits kept in this process, synchronously (no promise on the request path): a window starts
 * with the first request of a bucket and lasts `windowMs`, as in the Redis store; concurrency is a
 * plain counter per bucket.
 */
export class MemoryLimitStore implements LimitStore {
  // Limits only change with a restart (config) or a new key, so a bucket's window is keyed by
  // (limit, window length, bucket): counters never move between two limits.
  private readonly windows = new Map<string, Window>();
  // A bucket's counter stays in the map when its count falls to 0 (dropped by the sweep): deleting
  // the last entry and adding it again shrank and regrew the map on every request of a key whose
  // requests do not overlap (~1.3 µs each). A slot holds its counter, so its release looks nothing up.
  private readonly slots = new Map<string, { held: number }>();
  private readonly ids = new Map<string, { limit: number; windowMs: number; id: string }>();
  private sweeper: NodeJS.Timeout | null = null;

  async hit(bucket: string, limit: number, windowMs: number): Promise<WindowResult> {
    return this.hitNow(bucket, limit, windowMs);
  }

  /** Counts one request now; a request over the limit is counted too (like rate-limiter-flexible). */
  hitNow(bucket: string, limit: number, windowMs: number, now = Date.now()): WindowResult {
    const id = this.windowIdOf(bucket, limit, windowMs);
    let w = this.windows.get(id);
    if (!w || w.endsAt <= now) {
      w = { count: 0, endsAt: now + windowMs };
      this.windows.set(id, w);
      this.sweep();
    }
    w.count++;
    const resetMs = w.endsAt - now;
    return { allowed: w.count <= limit, limit, remaining: Math.max(0, limit - w.count), resetMs: resetMs > 0 ? resetMs : windowMs };
  }

  async unhit(bucket: string, limit: number, windowMs: number): Promise<void> {
    const w = this.windows.get(this.windowIdOf(bucket, limit, windowMs));
    if (w && w.count > 0 && w.endsAt > Date.now()) w.count--;
  }

  /**
   * The window's map key, kept per bucket while its limit and length stay the same: the request
   * path then neither joins nor hashes a new string (a bucket name kept by the caller is hashed once).
   */
  private windowIdOf(bucket: string, limit: number, windowMs: number): string {
    const known = this.ids.get(bucket);
    if (known && known.limit === limit && known.windowMs === windowMs) return known.id;
    if (this.ids.size >= MAX_KEPT_IDS) this.ids.clear();
    const id = windowId(bucket, limit, windowMs);
    this.ids.set(bucket, { limit, windowMs, id });
    return id;
  }

  async acquire(bucket: string, limit: number): Promise<Slot | null> {
    return this.acquireNow(bucket, limit);
  }

  /** Synchronous acquire, also used by the Redis store when Redis cannot be reached. */
  acquireNow(bucket: string, limit: number): Slot | null {
    let counter = this.slots.get(bucket);
    if (!counter) {
      counter = { held: 0 };
      this.slots.set(bucket, counter);
      this.sweep();
    }
    if (counter.held >= limit) return null;
    counter.held++;
    return new HeldSlot(counter);
  }

  async held(bucket: string): Promise<number> {
    return this.slots.get(bucket)?.held ?? 0;
  }

  /** Drops ended windows and unheld slot counters every SWEEP_EVERY_MS while any is kept. */
  private sweep(): void {
    if (this.sweeper) return;
    this.sweeper = setInterval(() => {
      const now = Date.now();
      for (const [id, w] of this.windows) if (w.endsAt <= now) this.windows.delete(id);
      // A counter at 0 has no slot holding it, so none can be released into a dropped counter.
      for (const [bucket, c] of this.slots) if (c.held <= 0) this.slots.delete(bucket);
      if (!this.windows.size && !this.slots.size && this.sweeper) {
        clearInterval(this.sweeper);
        this.sweeper = null;
      }
    }, SWEEP_EVERY_MS);
    this.sweeper.unref();
  }

  async close(): Promise<void> {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = null;
    this.windows.clear();
    this.slots.clear();
    this.ids.clear();
  }
}

const windowId = (bucket: string, limit: number, windowMs: number) => `${limit}/${windowMs}/${bucket}`;

/** A held concurrency slot of the memory store: its release (only the first one counts) gives the counter back. */
class HeldSlot implements Slot {
  private counter: { held: number } | null;

  constructor(counter: { held: number }) {
    this.counter = counter;
  }

  release(): void {
    const c = this.counter;
    if (!c) return;
    this.counter = null;
    c.held--;
  }
}

import { onceSlot, type LimitStore, type Slot, type WindowResult } from './limit-store.js';

/** One fixed window of one bucket: requests counted in it and when it ends. */
interface Window {
  count: number;
  endsAt: number;
}

/** How often windows that ended are dropped (a bucket per key and per model: few, but unbounded over time). */
const SWEEP_EVERY_MS = 60_000;

/**
 * Limits kept in this process, synchronously (no promise on the request path): a window starts
 * with the first request of a bucket and lasts `windowMs`, as in the Redis store; concurrency is a
 * plain counter per bucket.
 */
export class MemoryLimitStore implements LimitStore {
  // Limits only change with a restart (config) or a new key, so a bucket's window is keyed by
  // (limit, window length, bucket): counters never move between two limits.
  private readonly windows = new Map<string, Window>();
  private readonly slots = new Map<string, number>();
  private sweeper: NodeJS.Timeout | null = null;

  async hit(bucket: string, limit: number, windowMs: number): Promise<WindowResult> {
    return this.hitNow(bucket, limit, windowMs);
  }

  /** Counts one request now; a request over the limit is counted too (like rate-limiter-flexible). */
  hitNow(bucket: string, limit: number, windowMs: number, now = Date.now()): WindowResult {
    const id = windowId(bucket, limit, windowMs);
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
    const w = this.windows.get(windowId(bucket, limit, windowMs));
    if (w && w.count > 0 && w.endsAt > Date.now()) w.count--;
  }

  async acquire(bucket: string, limit: number): Promise<Slot | null> {
    return this.acquireNow(bucket, limit);
  }

  /** Synchronous acquire, also used by the Redis store when Redis cannot be reached. */
  acquireNow(bucket: string, limit: number): Slot | null {
    const n = this.slots.get(bucket) ?? 0;
    if (n >= limit) return null;
    this.slots.set(bucket, n + 1);
    return onceSlot(() => {
      const left = (this.slots.get(bucket) ?? 1) - 1;
      if (left <= 0) this.slots.delete(bucket);
      else this.slots.set(bucket, left);
    });
  }

  async held(bucket: string): Promise<number> {
    return this.slots.get(bucket) ?? 0;
  }

  /** Drops ended windows every SWEEP_EVERY_MS while any window exists. */
  private sweep(): void {
    if (this.sweeper) return;
    this.sweeper = setInterval(() => {
      const now = Date.now();
      for (const [id, w] of this.windows) if (w.endsAt <= now) this.windows.delete(id);
      if (!this.windows.size && this.sweeper) {
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
  }
}

const windowId = (bucket: string, limit: number, windowMs: number) => `${limit}/${windowMs}/${bucket}`;

import type { LimitStore, Slot, WindowResult } from './limit-store.js';

/** One fixed window of one bucket: requests counted in it and when it ends. */
interface Window {
  count: number;
  endsAt: number;
}

/** How often windows that ended and idle slot counters are dropped (a bucket per key and per model: few, but unbounded over time). */
const SWEEP_EVERY_MS = 60_000;

/** The slots of one bucket in use. Kept while idle until the next sweep: no map churn per request. */
interface SlotCounter {
  held: number;
}

/** A slot of a bucket; only its first release() frees it. */
class MemorySlot implements Slot {
  private done = false;

  constructor(private readonly counter: SlotCounter) {}

  release(): void {
    if (this.done) return;
    this.done = true;
    this.counter.held--;
  }
}

/**
 * Limits kept in this process, with no I/O: a window starts
 * with the first request of a bucket and lasts `windowMs`, as in the Redis store; concurrency is a
 * plain counter per bucket.
 */
export class MemoryLimitStore implements LimitStore {
  // Limits only change with a restart (config) or a new key, so a bucket's window is keyed by
  // (limit, window length, bucket): counters never move between two limits.
  private readonly windows = new Map<string, Window>();
  private readonly slots = new Map<string, SlotCounter>();
  private sweeper: NodeJS.Timeout | null = null;

  async hit(bucket: string, limit: number, windowMs: number): Promise<WindowResult> {
    return this.hitNow(bucket, limit, windowMs);
  }

  /** Counts one request now; a request over the limit is counted too (like rate-limiter-flexible). */
  hitNow(bucket: string, limit: number, windowMs: number, now = Date.now()): WindowResult {
    return this.hitWindow(windowId(bucket, limit, windowMs), limit, windowMs, now);
  }

  /** hitNow() by the window's id (windowId()), for a caller that keeps the id between requests. */
  hitWindow(id: string, limit: number, windowMs: number, now = Date.now()): WindowResult {
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
    let counter = this.slots.get(bucket);
    if (!counter) {
      counter = { held: 0 };
      this.slots.set(bucket, counter);
      this.sweep();
    }
    if (counter.held >= limit) return null;
    counter.held++;
    return new MemorySlot(counter);
  }

  async held(bucket: string): Promise<number> {
    return this.slots.get(bucket)?.held ?? 0;
  }

  /**
   * Drops ended windows and idle slot counters every SWEEP_EVERY_MS while any exists. A counter
   * is dropped only with no slot held: no live slot refers to it (a later acquire makes a new one).
   */
  private sweep(): void {
    if (this.sweeper) return;
    this.sweeper = setInterval(() => {
      const now = Date.now();
      for (const [id, w] of this.windows) if (w.endsAt <= now) this.windows.delete(id);
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
  }
}

/** The id of a bucket's window under one limit (hitWindow() takes it). */
export const windowId = (bucket: string, limit: number, windowMs: number) => `${limit}/${windowMs}/${bucket}`;

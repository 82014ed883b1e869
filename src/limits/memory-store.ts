import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { onceSlot, type LimitStore, type Slot, type WindowResult } from './limit-store.js';

/**
 * Limits kept in this process. Windows come from rate-limiter-flexible (a window starts with the
 * first request of a bucket and lasts `windowMs`); concurrency is a plain counter per bucket.
 */
export class MemoryLimitStore implements LimitStore {
  // rate-limiter-flexible fixes `points` per limiter, so there is one limiter per (limit, window)
  // pair; limits only change with a restart (config) or a new key, so counters need not move between them.
  private readonly limiters = new Map<string, RateLimiterMemory>();
  private readonly slots = new Map<string, number>();

  async hit(bucket: string, limit: number, windowMs: number): Promise<WindowResult> {
    return consumeWindow(this.limiter(limit, windowMs), bucket, limit, windowMs);
  }

  async unhit(bucket: string, limit: number, windowMs: number): Promise<void> {
    await this.limiter(limit, windowMs).reward(bucket, 1);
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

  limiter(limit: number, windowMs: number): RateLimiterMemory {
    const id = `${limit}/${windowMs}`;
    let l = this.limiters.get(id);
    if (!l) {
      l = new RateLimiterMemory({ points: limit, duration: windowMs / 1000, keyPrefix: `w${id}` });
      this.limiters.set(id, l);
    }
    return l;
  }

  async close(): Promise<void> {
    this.limiters.clear();
    this.slots.clear();
  }
}

/** consume() resolves when allowed and rejects with a RateLimiterRes when over the limit. */
export async function consumeWindow(
  limiter: { consume(key: string, points?: number): Promise<RateLimiterRes> },
  bucket: string,
  limit: number,
  windowMs: number,
): Promise<WindowResult> {
  try {
    const r = await limiter.consume(bucket, 1);
    return { allowed: true, limit, remaining: r.remainingPoints, resetMs: resetOf(r, windowMs) };
  } catch (err) {
    if (err instanceof RateLimiterRes) return { allowed: false, limit, remaining: 0, resetMs: resetOf(err, windowMs) };
    throw err;
  }
}

function resetOf(r: RateLimiterRes, windowMs: number): number {
  return r.msBeforeNext > 0 ? r.msBeforeNext : windowMs;
}

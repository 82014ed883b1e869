import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { onceSlot, type LimitStore, type Slot, type WindowResult } from './limit-store.js';
import { MemoryLimitStore } from './memory-store.js';

// Redis keys (P = redis.key_prefix):
//   P rl:<bucket>   fixed-window counter (string, expires with the window) — rate-limiter-flexible
//   P cc:<bucket>   sorted set of held concurrency slots, member = instance:counter, score = lease end (ms)
// Slots are leases, renewed while held, so a crashed instance's slots free themselves.

const LEASE_MS = 30_000;
const RENEW_EVERY_MS = 10_000;
/** One Redis command may take this long before it counts as failed. */
const COMMAND_TIMEOUT_MS = 500;
/** Consecutive failed commands that open the breaker. */
const BREAKER_FAILURES = 2;
/** While open, Redis is probed (PING) this often, off the request path. */
const PROBE_EVERY_MS = 1000;

const NOW_MS = `local t = redis.call('TIME') local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

const ACQUIRE = `${NOW_MS}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[2])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]))
return 1`;

const RENEW = `${NOW_MS}
for i = 2, #ARGV do redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[1]), ARGV[i]) end
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[1]))
return 1`;

const COUNT = `${NOW_MS}
return redis.call('ZCOUNT', KEYS[1], '(' .. now, '+inf')`;

type Warn = (message: string) => void;

/**
 * Limits shared by every instance through Redis. When Redis cannot be reached the store falls back
 * to this instance's memory (each instance then enforces the full limit on its own) instead of
 * refusing traffic or dropping limits altogether; see docs/limits.md.
 *
 * A Redis that hangs (accepts, never answers) would cost every request a command timeout per
 * command, so after BREAKER_FAILURES consecutive failures a breaker opens: requests use memory
 * limits at once, and a background PING every PROBE_EVERY_MS closes the breaker when Redis answers.
 */
export class RedisLimitStore implements LimitStore {
  private readonly windows = new Map<string, RateLimiterRedis>();
  private failures = 0;
  private probe: NodeJS.Timeout | null = null;
  private readonly fallback = new MemoryLimitStore();
  /** Slots this instance holds in Redis, by bucket, for lease renewal. */
  private readonly leases = new Map<string, Set<string>>();
  private readonly instance = randomBytes(6).toString('hex');
  private seq = 0;
  private readonly renewTimer: NodeJS.Timeout;
  private lastWarn = 0;

  private constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly warn: Warn,
  ) {
    this.renewTimer = setInterval(() => void this.renew(), RENEW_EVERY_MS);
    this.renewTimer.unref();
  }

  /** Connects (waiting up to a few seconds); an unreachable Redis is reported, not fatal. */
  static async connect(url: string, prefix: string, warn: Warn): Promise<RedisLimitStore> {
    const redis = new Redis(url, {
      lazyConnect: true,
      // Fail fast instead of queueing while disconnected: a request must not wait for Redis.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      commandTimeout: COMMAND_TIMEOUT_MS,
      connectTimeout: 3000,
      retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
    });
    const store = new RedisLimitStore(redis, prefix, warn);
    redis.on('error', (err: Error) => store.warnOnce(`redis: ${err.message}`));
    try {
      await redis.connect();
    } catch (err) {
      warn(`redis unreachable at start (${(err as Error).message}); limits are per instance until it answers`);
    }
    return store;
  }

  async hit(bucket: string, limit: number, windowMs: number): Promise<WindowResult> {
    if (!this.usable()) return this.fallback.hit(bucket, limit, windowMs);
    try {
      const r = await consumeWindow(this.window(limit, windowMs), bucket, limit, windowMs);
      this.succeeded();
      return r;
    } catch (err) {
      this.failed(err, 'rate check');
      return this.fallback.hit(bucket, limit, windowMs);
    }
  }

  async unhit(bucket: string, limit: number, windowMs: number): Promise<void> {
    if (!this.usable()) return this.fallback.unhit(bucket, limit, windowMs);
    await this.window(limit, windowMs)
      .reward(bucket, 1)
      .then(
        () => this.succeeded(),
        (err: unknown) => this.failed(err, 'rate refund'),
      );
  }

  async acquire(bucket: string, limit: number): Promise<Slot | null> {
    if (!this.usable()) return this.fallback.acquireNow(bucket, limit);
    const key = `${this.prefix}cc:${bucket}`;
    const member = `${this.instance}:${++this.seq}`;
    let ok: unknown;
    try {
      ok = await this.redis.eval(ACQUIRE, 1, key, String(limit), member, String(LEASE_MS));
      this.succeeded();
    } catch (err) {
      this.failed(err, 'concurrency check');
      return this.fallback.acquireNow(bucket, limit);
    }
    if (Number(ok) !== 1) return null;
    let set = this.leases.get(key);
    if (!set) this.leases.set(key, (set = new Set()));
    set.add(member);
    return onceSlot(() => {
      const s = this.leases.get(key);
      s?.delete(member);
      if (s && s.size === 0) this.leases.delete(key);
      // A failed ZREM is harmless: the lease ends by itself.
      this.redis.zrem(key, member).catch(() => undefined);
    });
  }

  async held(bucket: string): Promise<number> {
    const local = await this.fallback.held(bucket);
    if (!this.usable()) return local;
    return Number(await this.redis.eval(COUNT, 1, `${this.prefix}cc:${bucket}`)) + local;
  }

  /** Whether requests talk to Redis now: connected, and the breaker closed. */
  usable(): boolean {
    return this.redis.status === 'ready' && this.probe === null;
  }

  async close(): Promise<void> {
    clearInterval(this.renewTimer);
    if (this.probe) clearTimeout(this.probe);
    this.probe = null;
    await this.fallback.close();
    if (this.redis.status === 'ready') await this.redis.quit().catch(() => this.redis.disconnect());
    else this.redis.disconnect();
  }

  private window(limit: number, windowMs: number): RateLimiterRedis {
    const id = `${limit}/${windowMs}`;
    let l = this.windows.get(id);
    if (!l) {
      l = new RateLimiterRedis({
        storeClient: this.redis,
        keyPrefix: `${this.prefix}rl`,
        points: limit,
        duration: windowMs / 1000,
        rejectIfRedisNotReady: true,
      });
      this.windows.set(id, l);
    }
    return l;
  }

  private async renew(): Promise<void> {
    if (!this.leases.size || !this.usable()) return;
    const pipe = this.redis.pipeline();
    for (const [key, members] of this.leases) pipe.eval(RENEW, 1, key, String(LEASE_MS), ...members);
    try {
      await pipe.exec();
    } catch (err) {
      this.warnOnce(`redis: lease renewal failed (${(err as Error).message})`);
    }
  }

  private succeeded(): void {
    this.failures = 0;
  }

  private failed(err: unknown, what: string): void {
    this.warnOnce(`redis: ${what} failed (${(err as Error).message}); using this instance's limits`);
    if (++this.failures < BREAKER_FAILURES || this.probe) return;
    this.warn(`redis: ${this.failures} commands failed in a row; limits are per instance until a probe answers (every ${PROBE_EVERY_MS} ms)`);
    this.scheduleProbe();
  }

  private scheduleProbe(): void {
    this.probe = setTimeout(() => {
      this.redis.ping().then(
        () => {
          this.probe = null;
          this.failures = 0;
          this.warn('redis: answers again; limits are shared again');
        },
        () => this.scheduleProbe(),
      );
    }, PROBE_EVERY_MS);
    this.probe.unref();
  }

  private warnOnce(message: string): void {
    const now = Date.now();
    if (now - this.lastWarn < 10_000) return;
    this.lastWarn = now;
    this.warn(message);
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

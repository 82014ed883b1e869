import type { Principal } from '../auth/principal.js';
import type { Config } from '../config/schema.js';
import { GatewayError } from '../http/errors.js';
import { registerSecret } from '../http/redact.js';
import type { LimitStore, Slot, WindowResult } from './limit-store.js';
import { MemoryLimitStore, windowId } from './memory-store.js';

const MINUTE_MS = 60_000;

/** What an admitted request carries: headers to send and its concurrency slot (if the key has a limit). */
export interface KeyAdmission {
  headers: Record<string, string>;
  slot: Slot | null;
}

/** A key's bucket and rpm window ids, made once per Principal (a new one comes with every key cache refresh). */
interface KeyBuckets {
  bucket: string;
  window: string;
}

/**
 * The gateway's rate-limit policy: per key, requests per minute and requests in flight; per model,
 * requests per minute across all keys. 0 means unlimited everywhere. A refusal is a GatewayError
 * 429 `rate_limit_exceeded` with Retry-After and X-RateLimit-* headers; it happens before any
 * upstream call or credit reservation, so it costs nothing.
 */
export class RateLimits {
  private readonly keyBuckets = new WeakMap<Principal, KeyBuckets>();

  constructor(
    readonly store: LimitStore,
    private readonly config: Config,
  ) {}

  /**
   * Key concurrency, then key rpm; the caller must release the slot when the response ends. A
   * request refused by one limit is counted by none: a refused slot spends no rpm, and a refused
   * rpm frees its slot at once.
   */
  async admitKey(p: Principal): Promise<KeyAdmission> {
    const s = this.store;
    if (!(s instanceof MemoryLimitStore)) return this.admitKeyShared(p);
    const ids = this.bucketsOf(p);
    const slot = p.concurrency > 0 ? s.acquireNow(ids.bucket, p.concurrency) : null;
    if (p.concurrency > 0 && !slot) throw slotsTaken(p);
    return p.rpm > 0 ? counted(p, slot, s.hitWindow(ids.window, p.rpm, MINUTE_MS)) : { headers: {}, slot };
  }

  /** The key's bucket names, built once per Principal rather than per request. */
  private bucketsOf(p: Principal): KeyBuckets {
    let ids = this.keyBuckets.get(p);
    if (!ids) {
      const bucket = `key:${p.keyId}`;
      ids = { bucket, window: windowId(bucket, p.rpm, MINUTE_MS) };
      this.keyBuckets.set(p, ids);
    }
    return ids;
  }

  /** admitKey() on a store shared by every instance (Redis). */
  private async admitKeyShared(p: Principal): Promise<KeyAdmission> {
    let slot: Slot | null = null;
    if (p.concurrency > 0) {
      slot = await this.store.acquire(`key:${p.keyId}`, p.concurrency);
      if (!slot) throw slotsTaken(p);
    }
    if (p.rpm <= 0) return { headers: {}, slot };
    let w: WindowResult;
    try {
      w = await this.store.hit(`key:${p.keyId}`, p.rpm, MINUTE_MS);
    } catch (err) {
      slot?.release();
      throw err;
    }
    return counted(p, slot, w);
  }

  /** Gives back the key rpm counted by admitKey() for a request a model limit then refused. */
  async refundKey(p: Principal): Promise<void> {
    if (p.rpm > 0) await this.store.unhit(`key:${p.keyId}`, p.rpm, MINUTE_MS);
  }

  /** Model rpm, only for configured models (an unknown model is the route's 404, not a limit). */
  async admitModel(model: string): Promise<void> {
    const rpm = this.modelRpm(model);
    if (rpm <= 0) return;
    const w = await this.store.hit(`model:${model}`, rpm, MINUTE_MS);
    if (!w.allowed) throw refused(`The model "${model}" allows ${rpm} requests per minute on this gateway.`, w);
  }

  modelRpm(model: string): number {
    if (!Object.hasOwn(this.config.models, model)) return 0;
    return this.config.models[model].rpm || this.config.limits.model_rpm;
  }

  close(): Promise<void> {
    return this.store.close();
  }
}

/** Memory limits, or Redis ones when `redis.url` is set. */
export async function createRateLimits(config: Config, warn: (message: string) => void): Promise<RateLimits> {
  const url = config.redis.url;
  if (!url) return new RateLimits(new MemoryLimitStore(), config);
  try {
    registerSecret(decodeURIComponent(new URL(url).password));
  } catch {
    // The schema already checked the scheme; an unparsable URL fails in ioredis with its own message.
  }
  // Loaded only here: ioredis and its Lua scripts cost memory a single instance does not need.
  const { RedisLimitStore } = await import('./redis-store.js');
  return new RateLimits(await RedisLimitStore.connect(url, config.redis.key_prefix, warn), config);
}

// Nobody knows when a slot frees; the client is asked to retry in a second.
const slotsTaken = (p: Principal) => refused(`This key allows ${p.concurrency} requests in flight at once.`, { allowed: false, limit: p.concurrency, remaining: 0, resetMs: 1000 });

/** The admission once the key's rpm window counted the request: its headers, or a 429 that frees the slot. */
function counted(p: Principal, slot: Slot | null, w: WindowResult): KeyAdmission {
  if (!w.allowed) {
    slot?.release();
    throw refused(`This key allows ${p.rpm} requests per minute.`, w);
  }
  return { headers: windowHeaders(w), slot };
}

const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

/** X-RateLimit-Reset is in seconds until the window resets (like Retry-After), never 0. */
function windowHeaders(w: WindowResult): Record<string, string> {
  return {
    'x-ratelimit-limit': String(w.limit),
    'x-ratelimit-remaining': String(w.remaining),
    'x-ratelimit-reset': String(seconds(w.resetMs)),
  };
}

function refused(message: string, w: WindowResult): GatewayError {
  return new GatewayError(429, 'rate_limit_exceeded', `Rate limit exceeded: ${message} Retry after ${seconds(w.resetMs)} s.`, {
    'retry-after': String(seconds(w.resetMs)),
    ...windowHeaders({ ...w, remaining: 0 }),
  });
}

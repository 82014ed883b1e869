import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';

/** ioredis is loaded only by a gateway that has `redis.url`. */
const ioredis = () => import('ioredis').then((m) => m.Redis);

// Instances tell each other about changes through Redis pub/sub (P = redis.key_prefix):
//   P reload   {"origin": "<instance>"}                 → re-read your own config file
//   P keys     {"origin": "<instance>", "key_id": "…"}  → drop your cache of authenticated keys
//   P channels {"origin": "<instance>", "name": "…"}    → re-read the channels stored at runtime
// Pub/sub keeps no history: an instance disconnected while a message was sent never sees it. Both
// messages only speed things up or repeat what an operator can do per instance (SIGHUP; the key
// cache expires within seconds anyway; stored channels are re-read every second), so a Redis outage leaves every instance serving with the
// config it has.

export type ClusterEvent = 'reload' | 'keys' | 'channels';

export interface RedisSection {
  url?: string;
  key_prefix: string;
}

export interface ClusterHandlers {
  reload(): void;
  keys(): void;
  channels(): void;
}

type Warn = (message: string) => void;

export const channelOf = (prefix: string, event: ClusterEvent) => `${prefix}${event}`;

/** This instance's subscription to the other instances' messages, and its way to send its own. */
export class ClusterBus {
  /** Identifies this instance's messages, so it does not act on what it sent itself. */
  readonly origin = randomBytes(6).toString('hex');
  private lastWarn = 0;
  private healthTimer: NodeJS.Timeout | null = null;

  private constructor(
    private readonly sub: Redis,
    private readonly pub: Redis,
    private readonly prefix: string,
    private readonly warn: Warn,
  ) {}

  /**
   * Subscribes (waiting at most `waitMs` for Redis; an unreachable Redis is reported, and the
   * subscription is made whenever it answers).
   */
  static async connect(redis: Required<RedisSection>, handlers: ClusterHandlers, warn: Warn, waitMs = 3000): Promise<ClusterBus> {
    // The subscriber waits for Redis as long as it takes (its commands queue until connected);
    // the publisher fails fast, so a SIGHUP never hangs on a dead Redis.
    const Redis = await ioredis();
    const sub = new Redis(redis.url, { maxRetriesPerRequest: null, retryStrategy: (n) => Math.min(n * 200, 2000), connectTimeout: 3000 });
    const pub = new Redis(redis.url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      commandTimeout: 2000,
      connectTimeout: 3000,
      retryStrategy: (n) => Math.min(n * 200, 2000),
    });
    const bus = new ClusterBus(sub, pub, redis.key_prefix, warn);
    sub.on('error', (err: Error) => bus.warnOnce(`redis (cluster messages): ${err.message}`));
    pub.on('error', (err: Error) => bus.warnOnce(`redis (cluster messages): ${err.message}`));
    sub.on('message', (channel: string, text: string) => bus.dispatch(channel, text, handlers));
    const subscribed = sub.subscribe(channelOf(redis.key_prefix, 'reload'), channelOf(redis.key_prefix, 'keys'), channelOf(redis.key_prefix, 'channels'));
    const timer = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), waitMs).unref());
    const first = await Promise.race([subscribed.then(() => 'ok' as const, (err: Error) => err), timer]);
    if (first !== 'ok') {
      warn(`redis unreachable for cluster messages (${first === 'timeout' ? 'no answer' : first.message}); this instance will not hear other instances' reloads until it answers`);
    }
    return bus;
  }

  /** Tells every other instance; resolves with how many instances received it. */
  async publish(event: ClusterEvent, extra: Record<string, string> = {}): Promise<number> {
    return this.pub.publish(channelOf(this.prefix, event), JSON.stringify({ ...extra, origin: this.origin }));
  }

  /**
   * Shares channel health counts: every `everyMs` this instance writes its own window counts into
   * one hash (P health, a field per instance) and reads the others' fresh ones, so each instance
   * judges a channel on what every instance saw. A Redis outage leaves each judging on its own.
   */
  shareHealth(local: () => Record<string, { requests: number; errors: number }>, apply: (peers: Map<string, { requests: number; errors: number }>) => void, everyMs = 1000): void {
    const key = `${this.prefix}health`;
    const tick = async () => {
      const now = Date.now();
      const [, , all] = (await this.pub.multi().hset(key, this.origin, JSON.stringify({ at: now, channels: local() })).pexpire(key, 120_000).hgetall(key).exec()) ?? [];
      const fields = (all?.[1] ?? {}) as Record<string, string>;
      const peers = new Map<string, { requests: number; errors: number }>();
      const stale: string[] = [];
      for (const [origin, text] of Object.entries(fields)) {
        if (origin === this.origin) continue;
        try {
          const entry = JSON.parse(text) as { at: number; channels: Record<string, { requests: number; errors: number }> };
          // An instance that stopped writing is left out after 3 s and its field dropped after a minute.
          if (now - entry.at > 60_000) stale.push(origin);
          if (now - entry.at > 3 * everyMs) continue;
          for (const [name, c] of Object.entries(entry.channels)) {
            const sum = peers.get(name) ?? { requests: 0, errors: 0 };
            peers.set(name, { requests: sum.requests + c.requests, errors: sum.errors + c.errors });
          }
        } catch {
          stale.push(origin);
        }
      }
      if (stale.length) await this.pub.hdel(key, ...stale);
      apply(peers);
    };
    this.healthTimer = setInterval(() => void tick().catch((err: Error) => this.warnOnce(`redis (channel health): ${err.message}`)), everyMs);
    this.healthTimer.unref();
  }

  async close(): Promise<void> {
    if (this.healthTimer) clearInterval(this.healthTimer);
    for (const c of [this.sub, this.pub]) {
      if (c.status === 'ready') await c.quit().catch(() => c.disconnect());
      else c.disconnect();
    }
  }

  private dispatch(channel: string, text: string, handlers: ClusterHandlers): void {
    let msg: { origin?: unknown };
    try {
      msg = JSON.parse(text) as { origin?: unknown };
    } catch {
      return;
    }
    if (!msg || msg.origin === this.origin) return;
    if (channel === channelOf(this.prefix, 'reload')) handlers.reload();
    else if (channel === channelOf(this.prefix, 'keys')) handlers.keys();
    else if (channel === channelOf(this.prefix, 'channels')) handlers.channels();
  }

  private warnOnce(message: string): void {
    const now = Date.now();
    if (now - this.lastWarn < 10_000) return;
    this.lastWarn = now;
    this.warn(message);
  }
}

/** One message from a short-lived process (the CLI); resolves with how many instances received it. */
export async function publishOnce(redis: Required<RedisSection>, event: ClusterEvent, extra: Record<string, string> = {}): Promise<number> {
  const Redis = await ioredis();
  const client = new Redis(redis.url, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, connectTimeout: 3000, commandTimeout: 3000, retryStrategy: () => null });
  client.on('error', () => {});
  try {
    await client.connect();
    return await client.publish(channelOf(redis.key_prefix, event), JSON.stringify({ ...extra, origin: 'cli' }));
  } finally {
    client.disconnect();
  }
}

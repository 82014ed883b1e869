import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server, type Socket } from 'node:net';
import { Redis } from 'ioredis';
import { startGateway, type TestGateway } from './helpers/gateway.js';
import { freshRedisPrefix, REDIS_URL } from './helpers/redis.js';
import { startPausableProxy, type PausableProxy } from './helpers/pausable-proxy.js';
import { eventually } from './helpers/eventually.js';

// Redis that accepts and never answers: behind a proxy that stops forwarding after the gateway
// connected (a hung server), and a fake server that never answered at all. Requests must not wait
// for it (a breaker sends them to this instance's memory limits at once), limits still apply, and
// shared limits resume when Redis answers again.

const body = JSON.stringify({ model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }], max_tokens: 8 });

async function chat(gw: TestGateway, key: string): Promise<{ status: number; ms: number }> {
  const t0 = Date.now();
  const res = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body, signal: AbortSignal.timeout(15_000) });
  await res.arrayBuffer();
  return { status: res.status, ms: Date.now() - t0 };
}

describe('a hung Redis behind the limits', () => {
  const redis = freshRedisPrefix();
  let proxy: PausableProxy;
  let gw: TestGateway;

  beforeAll(async () => {
    const real = new URL(REDIS_URL);
    proxy = await startPausableProxy(real.hostname, Number(real.port || 6379));
    gw = await startGateway({ redis: { url: `redis://127.0.0.1:${proxy.port}`, key_prefix: redis.config.key_prefix } });
  });

  afterAll(async () => {
    proxy?.resume();
    await gw?.close();
    await proxy?.close();
    await redis.cleanup();
  });

  it('stops waiting for Redis after a few timeouts, keeps limiting in memory, and shares limits again once Redis answers', async () => {
    const { id, key } = await gw.createKey({ rpm: 6, concurrency: 2 });
    expect((await chat(gw, key)).status).toBe(200);
    const counter = `${redis.config.key_prefix}rl:key:${id}`;
    const direct = new Redis(REDIS_URL);
    try {
      expect(Number(await direct.get(counter))).toBe(1);

      proxy.pause();
      const answers: Array<{ status: number; ms: number }> = [];
      for (let i = 0; i < 9; i++) answers.push(await chat(gw, key));
      // The breaker opened within the first requests; every later one takes no Redis wait at all.
      for (const a of answers.slice(3)) expect(a.ms).toBeLessThan(500);
      // The rpm limit still holds, counted in this instance's memory (a fresh window there: 6 more).
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200, 429, 429, 429]);

      proxy.resume();
      // The background probe closes the breaker: hits are counted in Redis again.
      const before = Number(await direct.get(counter));
      await eventually(
        async () => {
          await chat(gw, key);
          return Number(await direct.get(counter)) > before;
        },
        10_000,
        'the Redis counter to move again',
        200,
      );
    } finally {
      direct.disconnect();
    }
  });
});

describe('a Redis that never answered', () => {
  const sockets = new Set<Socket>();
  let server: Server;
  let gw: TestGateway;

  beforeAll(async () => {
    // Accepts connections and never writes a byte.
    server = createServer((s) => {
      sockets.add(s);
      s.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    gw = await startGateway({ redis: { url: `redis://127.0.0.1:${port}`, key_prefix: 'mgtest:never:' } });
  });

  afterAll(async () => {
    await gw?.close();
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('serves every request without a Redis wait and applies the limits in memory', async () => {
    const { key } = await gw.createKey({ rpm: 3 });
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await chat(gw, key));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 429]);
    for (const a of answers) expect(a.ms).toBeLessThan(500);
  });
});

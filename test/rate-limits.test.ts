import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from './helpers/gateway.js';
import { freshRedisPrefix, keysUnder } from './helpers/redis.js';
import { startProbeApp, until, type ProbeApp } from './helpers/probe-app.js';
import { SEEDANCE_MODELS, SIMULATOR_MODELS } from '../src/config-file/defaults.js';
import { buildApp } from '../src/app.js';
import { createServices } from '../src/services.js';

// The done-when of the limits issue, once with the memory backend and once with Redis
// (a random key prefix per suite, deleted afterwards).

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

function expectRateLimited(res: Response, body: any, limit: number) {
  expect(res.status).toBe(429);
  expect(body.error.code).toBe('rate_limit_exceeded');
  expect(body.error.type).toBe('rate_limit_error');
  expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  expect(res.headers.get('x-ratelimit-limit')).toBe(String(limit));
  expect(res.headers.get('x-ratelimit-remaining')).toBe('0');
  expect(Number(res.headers.get('x-ratelimit-reset'))).toBeGreaterThanOrEqual(1);
}

describe.each(['memory', 'redis'] as const)('rate limits with the %s backend', (backend) => {
  let gw: TestGateway;
  let probe: ProbeApp;
  const redis = backend === 'redis' ? freshRedisPrefix() : null;

  beforeAll(async () => {
    gw = await startGateway({
      ...(redis ? { redis: redis.config } : {}),
      models: { ...SIMULATOR_MODELS, ...SEEDANCE_MODELS, 'sim-chat': { ...SIMULATOR_MODELS['sim-chat'], rpm: 3 } },
    });
    probe = await startProbeApp(gw.services);
  });
  afterAll(async () => {
    await probe?.close();
    await gw?.close();
    if (redis) {
      await redis.cleanup();
      expect(await keysUnder(redis.config.key_prefix)).toEqual([]);
    }
  });

  it('gives a key limited to 60 requests per minute exactly 60 of 200 parallel requests', async () => {
    const { key } = await gw.createKey({ rpm: 60 });
    const answers = await Promise.all(
      Array.from({ length: 200 }, async () => {
        const res = await fetch(`${gw.url}/v1/models`, { headers: bearer(key) });
        return { res, body: await res.json() };
      }),
    );
    const ok = answers.filter((a) => a.res.status === 200);
    const refused = answers.filter((a) => a.res.status !== 200);
    expect(ok).toHaveLength(60);
    expect(refused).toHaveLength(140);
    for (const { res, body } of refused) expectRateLimited(res, body, 60);
    // Accepted answers carry the key's window too, counting down to 0.
    const remaining = ok.map((a) => Number(a.res.headers.get('x-ratelimit-remaining'))).sort((a, b) => a - b);
    expect(remaining).toEqual(Array.from({ length: 60 }, (_, i) => i));
    for (const { res } of ok) expect(res.headers.get('x-ratelimit-limit')).toBe('60');
    if (redis) expect((await keysUnder(redis.config.key_prefix)).some((k) => k.startsWith(`${redis.config.key_prefix}rl:key:`))).toBe(true);
  });

  it('sends no X-RateLimit headers for a key without a rate limit', async () => {
    const { key } = await gw.createKey();
    const res = await fetch(`${gw.url}/v1/models`, { headers: bearer(key) });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-limit')).toBeNull();
  });

  it('never lets a key with a concurrency limit of 5 have a 6th request in flight', async () => {
    const { key, id } = await gw.createKey({ concurrency: 5 });
    probe.shut();
    probe.maxInFlight = 0;
    let refused = 0;
    const pending = Array.from({ length: 20 }, async () => {
      const res = await fetch(`${probe.url}/v1/__probe/slow`, { headers: bearer(key) });
      const body = await res.json();
      if (res.status === 429) {
        refused++;
        expectRateLimited(res, body, 5);
      }
      return res.status;
    });
    // Every request either holds one of the 5 slots or was refused.
    await until(() => probe.inFlight === 5 && refused === 15, '5 in flight and 15 refused');
    expect(await gw.services.limits.store.held(`key:${id}`)).toBe(5);
    probe.open();
    const statuses = await Promise.all(pending);
    expect(statuses.filter((s) => s === 200)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(15);
    expect(probe.maxInFlight).toBe(5);
    // Every slot came back exactly once: a second wave again gets exactly 5.
    await until(async () => (await gw.services.limits.store.held(`key:${id}`)) === 0, 'slots released');
    probe.shut();
    probe.maxInFlight = 0;
    let refusedAgain = 0;
    const wave = Array.from({ length: 7 }, () =>
      fetch(`${probe.url}/v1/__probe/slow`, { headers: bearer(key) }).then((r) => {
        if (r.status === 429) refusedAgain++;
        return r.status;
      }),
    );
    // All 7 must have arrived (5 holding, 2 refused) before any slot frees, or a late one takes a freed slot.
    await until(() => probe.inFlight === 5 && refusedAgain === 2, '5 in flight again and 2 refused');
    probe.open();
    const second = await Promise.all(wave);
    expect(second.filter((s) => s === 200)).toHaveLength(5);
    expect(second.filter((s) => s === 429)).toHaveLength(2);
    expect(probe.maxInFlight).toBe(5);
  });

  it('frees a slot once when the client disconnects mid-request and when a stream ends or is abandoned', async () => {
    const { key, id } = await gw.createKey({ concurrency: 2 });
    const held = () => gw.services.limits.store.held(`key:${id}`);
    probe.shut();
    // A client gives up on a slow request: its slot is free at once.
    const abort = new AbortController();
    const gone = fetch(`${probe.url}/v1/__probe/slow`, { headers: bearer(key), signal: abort.signal }).catch(() => 'aborted');
    await until(async () => (await held()) === 1, 'slow request holds a slot');
    abort.abort();
    expect(await gone).toBe('aborted');
    await until(async () => (await held()) === 0, 'slot freed on disconnect');
    probe.open();

    // A stream holds its slot until its last byte.
    const streamed = await fetch(`${probe.url}/v1/__probe/stream`, { headers: bearer(key) });
    expect(streamed.status).toBe(200);
    const reader = streamed.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toContain('data:');
    expect(await held()).toBe(1);
    probe.streams.shift()!.end('data: [DONE]\n\n');
    while (!(await reader.read()).done);
    await until(async () => (await held()) === 0, 'slot freed when the stream ended');

    // A client abandons a stream that never ends: the slot is freed when it disconnects.
    const abandon = new AbortController();
    const open = await fetch(`${probe.url}/v1/__probe/stream`, { headers: bearer(key), signal: abandon.signal });
    await open.body!.getReader().read();
    expect(await held()).toBe(1);
    abandon.abort();
    await until(async () => (await held()) === 0, 'slot freed when the stream was abandoned');
    probe.streams.shift()!.end();

    // Freed exactly once each: two slots, never three.
    probe.shut();
    const wave = Array.from({ length: 3 }, () => fetch(`${probe.url}/v1/__probe/slow`, { headers: bearer(key) }).then((r) => r.status));
    await until(() => probe.inFlight === 2, '2 in flight');
    probe.open();
    expect((await Promise.all(wave)).sort()).toEqual([200, 200, 429]);
  });

  it('limits a model across keys by its rpm, counting only keys allowed to use it', async () => {
    const a = await gw.createKey();
    const b = await gw.createKey();
    const other = await gw.createKey({ models: ['sim-image'] });
    const echo = (key: string, model: string) =>
      fetch(`${probe.url}/v1/__probe/echo`, { method: 'POST', headers: { ...bearer(key), 'content-type': 'application/json' }, body: JSON.stringify({ model }) });
    // A key that may not use the model and an unknown model do not spend the model's budget.
    expect((await echo(other.key, 'sim-chat')).status).toBe(200);
    expect((await echo(a.key, 'no-such-model')).status).toBe(200);
    expect((await echo(a.key, 'sim-chat')).status).toBe(200);
    expect((await echo(b.key, 'sim-chat')).status).toBe(200);
    // The third counts through limitModel() from a route without a JSON model.
    expect((await fetch(`${probe.url}/v1/__probe/upload?model=sim-chat`, { method: 'POST', headers: bearer(b.key) })).status).toBe(200);
    const res = await echo(a.key, 'sim-chat');
    const body = (await res.json()) as { error: { message: string } };
    expectRateLimited(res, body, 3);
    expect(body.error.message).toContain('sim-chat');
    await gw.services.ledger.flush();
    const refusals = await gw.services.store.db.selectFrom('usage').select(['model', 'status']).where('key_id', '=', a.id).where('status', '=', 429).execute();
    expect(refusals).toEqual([{ model: 'sim-chat', status: 429 }]);
    // Other models are not affected.
    expect((await echo(a.key, 'sim-claude')).status).toBe(200);
    // A request the model limit refused spends none of the key's own rpm.
    const c = await gw.createKey({ rpm: 2 });
    expect((await echo(c.key, 'sim-chat')).status).toBe(429);
    expect((await echo(c.key, 'sim-chat')).status).toBe(429);
    expect((await echo(c.key, 'sim-claude')).status).toBe(200);
    expect((await echo(c.key, 'sim-claude')).status).toBe(200);
    const own = await echo(c.key, 'sim-claude');
    expectRateLimited(own, await own.json(), 2);
  });

  it('charges no credit for a refused request', async () => {
    const { key, id } = await gw.createKey({ rpm: 2, creditMicros: 1000 });
    const statuses = await Promise.all(
      Array.from({ length: 6 }, () => fetch(`${probe.url}/v1/__probe/charge`, { method: 'POST', headers: bearer(key) }).then((r) => r.status)),
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(2);
    expect(statuses.filter((s) => s === 429)).toHaveLength(4);
    expect(await gw.services.credit.spendable(id)).toBe(1000 - 2 * 100);
    expect(await gw.services.credit.heldCount(id)).toBe(0);
    // Each refusal is one ledger row: status 429, nothing charged.
    await gw.services.ledger.flush();
    const rows = await gw.services.store.db.selectFrom('usage').select(['status', 'cost_micros', 'endpoint', 'model']).where('key_id', '=', id).execute();
    expect(rows.map((r) => [Number(r.status), Number(r.cost_micros), r.endpoint, r.model])).toEqual(Array(4).fill([429, 0, '/v1/__probe/charge', '']));
  });
});

describe('Redis rate limits', () => {
  it('share one key limit between two gateway instances', async () => {
    const redis = freshRedisPrefix();
    const gw = await startGateway({ redis: redis.config });
    const second = await createServices(gw.config);
    const app2 = buildApp(second, { logStream: { write: () => undefined } });
    try {
      await app2.listen({ host: '127.0.0.1', port: 0 });
      const addr = app2.server.address();
      const url2 = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
      const { key } = await gw.createKey({ rpm: 60 });
      const statuses = await Promise.all(
        Array.from({ length: 200 }, (_, i) => fetch(`${i % 2 ? url2 : gw.url}/v1/models`, { headers: bearer(key) }).then((r) => r.status)),
      );
      expect(statuses.filter((s) => s === 200)).toHaveLength(60);
      expect(statuses.filter((s) => s === 429)).toHaveLength(140);
    } finally {
      await app2.close();
      await second.close();
      await gw.close();
      await redis.cleanup();
    }
  });

  it('fall back to per-instance limits when Redis cannot be reached', async () => {
    // Port 1 on loopback refuses connections.
    const gw = await startGateway({ redis: { url: 'redis://127.0.0.1:1', key_prefix: 'mgtest-unreachable:' } }, { expectWarnings: /redis/i });
    try {
      expect(gw.warnings.join('\n')).toMatch(/redis unreachable at start/);
      const { key } = await gw.createKey({ rpm: 3, concurrency: 2 });
      // One at a time: the rpm limit decides (six at once may meet the concurrency limit first,
      // e.g. when they all wait for the key's one database lookup and are admitted together).
      const answers: { status: number; limit: string | null }[] = [];
      for (let i = 0; i < 6; i++) {
        const r = await fetch(`${gw.url}/v1/models`, { headers: bearer(key) });
        await r.arrayBuffer();
        answers.push({ status: r.status, limit: r.headers.get('x-ratelimit-limit') });
      }
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 429, 429, 429]);
      expect(answers.map((a) => a.limit)).toEqual(['3', '3', '3', '3', '3', '3']);
    } finally {
      await gw.close();
    }
  });
});

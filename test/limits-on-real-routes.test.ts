import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from './helpers/gateway.js';
import { until } from './helpers/probe-app.js';

// The limit hooks on the real chat and video routes: a hung upstream call holds the key's only
// slot, a second request is refused without touching credit, and the slot comes back when the
// client gives up.

describe('limits on the real routes', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway();
  });
  afterAll(async () => gw?.close());

  const chat = (key: string, signal?: AbortSignal, stream = false) =>
    fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sim-chat', messages: [{ role: 'user', content: 'hello' }], stream }),
      signal,
    });

  it('holds a chat slot while the upstream hangs, refuses the next request free of charge, and frees it on disconnect', async () => {
    const { key, id } = await gw.createKey({ concurrency: 1, creditMicros: 1_000_000 });
    const held = () => gw.services.limits.store.held(`key:${id}`);
    const fault = await fetch(`${gw.services.simulator!.url}/__sim/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ match: 'openai.chat', kind: 'hang', count: 1 }),
    });
    expect(fault.ok).toBe(true);

    const abort = new AbortController();
    const hung = chat(key, abort.signal).catch(() => 'aborted');
    await until(async () => (await held()) === 1 && (await gw.services.credit.heldCount(id)) === 1, 'hung chat holds a slot and a reservation');
    const balanceDuring = await gw.services.credit.spendable(id);

    const refused = await chat(key);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('x-ratelimit-limit')).toBe('1');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('rate_limit_exceeded');
    expect(await gw.services.credit.spendable(id)).toBe(balanceDuring);
    expect(await gw.services.credit.heldCount(id)).toBe(1);

    abort.abort();
    expect(await hung).toBe('aborted');
    await until(async () => (await held()) === 0, 'slot freed on disconnect');
    // The abandoned request's hold is released, not charged.
    await until(async () => (await gw.services.credit.heldCount(id)) === 0, 'hold closed');

    const ok = await chat(key);
    expect(ok.status).toBe(200);
    const streamed = await chat(key, undefined, true);
    expect(streamed.status).toBe(200);
    expect(await streamed.text()).toContain('[DONE]');
    await until(async () => (await held()) === 0, 'slot freed after the stream');
  });

  it('counts video task creation against the model rpm', async () => {
    const gw2 = await startGateway({ limits: { model_rpm: 1 } });
    try {
      const { key } = await gw2.createKey();
      const create = () =>
        fetch(`${gw2.url}/v1/video/generations`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'sim-video', prompt: 'a corgi runs on grass' }),
        });
      expect((await create()).status).toBe(200);
      const second = await create();
      expect(second.status).toBe(429);
      const body = await second.json();
      expect(body).toMatchObject({ code: 'rate_limit_exceeded', data: null });
      expect(second.headers.get('x-ratelimit-limit')).toBe('1');
    } finally {
      await gw2.close();
    }
  });
});

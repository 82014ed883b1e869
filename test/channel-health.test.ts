import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminGateway, type AdminGateway } from './helpers/admin.js';
import { usageRowsOf } from './helpers/gateway.js';
import { eventually, simFault } from './helpers/video.js';
import { startSimulator, type Simulator } from '../src/simulator/server.js';

// A channel's health from real traffic: failing beyond the threshold it is taken out of rotation,
// probed (a model list, never a generation) on a doubling backoff and put back when a probe
// answers; a burst of client errors (the provider judging the request) never takes it out.

describe('channel health', () => {
  let gw: AdminGateway;
  let upstream: Simulator;

  beforeAll(async () => {
    upstream = await startSimulator({});
    gw = await startAdminGateway({
      // The breaker out of the way: health alone decides here.
      relay: { breaker_failures: 1000, health: { min_requests: 4, error_rate: 0.5, window_s: 60, probe_initial_ms: 100, probe_max_ms: 400 } },
    });
    const made = await gw.api('POST', '/admin/api/channels', { name: 'flaky', type: 'simulator', base_url: upstream.url, models: ['sim-chat'], priority: -1 });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
  });
  afterAll(async () => {
    await gw?.close();
    await upstream?.close();
  });

  const chat = (key: string) =>
    fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }] }),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));
  const health = async () => (await gw.api('GET', '/admin/api/channels/flaky')).body.health;
  const modelCalls = () => upstream.state.counts.get('openai.models') ?? 0;

  it('a burst of client errors never takes a channel out', async () => {
    const { key } = await gw.createKey();
    await simFault(upstream.url, { match: 'openai.chat', kind: 'status', status: 400, count: 12 });
    for (let i = 0; i < 12; i++) expect((await chat(key)).status).toBe(400);
    const h = await health();
    expect(h).toMatchObject({ state: 'in_rotation', instance: { errors: 0 } });
    expect(modelCalls()).toBe(0);
  });

  it('a failing channel is taken out, probed on a backoff, and put back when the probe answers', async () => {
    const { id, key } = await gw.createKey();
    // Chat fails on the channel; its first two probes fail too.
    await simFault(upstream.url, { match: 'openai.chat', kind: 'status', status: 500, count: 4 });
    await simFault(upstream.url, { match: 'openai.models', kind: 'status', status: 503, count: 2 });
    for (let i = 0; i < 4; i++) expect((await chat(key)).status).toBe(200); // retried on the next channel
    const out = await health();
    expect(out).toMatchObject({ state: 'out', instance: { requests: 4, errors: 4, error_rate: 1 }, last_error: { message: expect.stringMatching(/500/) } });
    expect(out.out_since).toEqual(expect.any(String));

    // While out, requests go straight to the other channel.
    const before = (await usageRowsOf(gw.services, id)).length;
    expect((await chat(key)).status).toBe(200);
    const rows = await usageRowsOf(gw.services, id);
    expect(rows.length).toBe(before + 1);
    expect(rows.at(-1)!.channel).toBe('simulator');

    const back = await eventually(async () => {
      const h = await health();
      return h.state === 'in_rotation' && h;
    }, 10_000, 'the channel back in rotation');
    expect(back.last_probe).toMatchObject({ ok: true, status: 200 });
    expect(modelCalls()).toBe(3); // two failed probes, one that answered: nothing billable
    expect(back.instance.requests).toBe(0); // a fresh window

    expect((await chat(key)).status).toBe(200);
    expect((await usageRowsOf(gw.services, id)).at(-1)!.channel).toBe('flaky');

    // Both events are structured log lines (pino), not stderr warnings.
    const events = gw.logs.flatMap((l) => l.split('\n')).filter(Boolean).map((l) => JSON.parse(l)).filter((e) => e.component === 'channels' && e.channel === 'flaky');
    expect(events.find((e) => e.msg === 'channel taken out of rotation')).toMatchObject({ level: 40, requests: 4, errors: 4, error_rate: 1, last_error: expect.stringMatching(/500/) });
    expect(events.find((e) => e.msg === 'channel back in rotation')).toMatchObject({ level: 30, out_for_ms: expect.any(Number) });
    expect(gw.warnings.join('\n')).not.toMatch(/rotation/);
  });

  it('runs no scheduled tests unless asked, and tests every enabled channel on the interval when asked', async () => {
    const calls = modelCalls();
    await new Promise((r) => setTimeout(r, 1500));
    expect(modelCalls()).toBe(calls);
    const sim2 = await startSimulator({});
    const tested = await startAdminGateway({
      relay: { health: { test_interval_s: 1 } },
      channels: [{ name: 'scheduled', type: 'simulator', base_url: sim2.url, models: ['sim-chat'] }],
    });
    try {
      await eventually(async () => (sim2.state.counts.get('openai.models') ?? 0) >= 2, 5000, 'two scheduled tests');
      const h = (await tested.api('GET', '/admin/api/channels/scheduled')).body.health;
      expect(h.last_probe).toMatchObject({ ok: true, status: 200 });
      expect(sim2.state.counts.get('openai.chat') ?? 0).toBe(0);
    } finally {
      await tested.close();
      await sim2.close();
    }
  });

  it('tests one channel on its own interval (admin API field), the others not; 0 or null stops it', async () => {
    const sim3 = await startSimulator({});
    const tests = () => sim3.state.counts.get('openai.models') ?? 0;
    try {
      for (const bad of [-1, 86401, 1.5, 'soon']) {
        const r = await gw.api('POST', '/admin/api/channels', { name: 'own-interval', type: 'simulator', base_url: sim3.url, models: ['sim-chat'], test_interval_s: bad });
        expect(r.status, String(bad)).toBe(400);
        expect(r.body.error.message).toMatch(/test_interval_s/);
      }
      const made = await gw.api('POST', '/admin/api/channels', { name: 'own-interval', type: 'simulator', base_url: sim3.url, models: ['sim-chat'], priority: 50, test_interval_s: 1 });
      expect(made.status, JSON.stringify(made.body)).toBe(201);
      expect(made.body).toMatchObject({ test_interval_s: 1, scheduled_test_s: 1 });
      expect((await gw.api('GET', '/admin/api/channels/flaky')).body.scheduled_test_s).toBe(0);
      const flakyCalls = modelCalls();
      await eventually(async () => tests() >= 2, 6000, 'two scheduled tests of the channel');
      expect((await gw.api('GET', '/admin/api/channels/own-interval')).body.health.last_probe).toMatchObject({ ok: true, status: 200 });
      expect(modelCalls()).toBe(flakyCalls); // the gateway's other channels are not tested
      expect(sim3.state.counts.get('openai.chat') ?? 0).toBe(0);

      const off = await gw.api('PATCH', '/admin/api/channels/own-interval', { test_interval_s: null });
      expect(off.body).toMatchObject({ scheduled_test_s: 0 });
      expect(off.body.test_interval_s).toBeUndefined();
      await new Promise((r) => setTimeout(r, 300));
      const after = tests();
      await new Promise((r) => setTimeout(r, 2200));
      expect(tests()).toBe(after);
    } finally {
      await gw.api('DELETE', '/admin/api/channels/own-interval');
      await sim3.close();
    }
  });

  it('probes a channel on request (the console\'s Test) without billing anything', async () => {
    const calls = modelCalls();
    const r = await gw.api('POST', '/admin/api/channels/flaky/probe');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ channel: 'flaky', ok: true, status: 200, probe: 'GET /v1/models (model list)', state: 'in_rotation' });
    expect(modelCalls()).toBe(calls + 1);
    expect((await gw.api('POST', '/admin/api/channels/nope/probe')).status).toBe(404);
  });
});

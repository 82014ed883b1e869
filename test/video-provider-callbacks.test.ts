import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from './helpers/gateway.js';
import { KLING_DEFAULT_MODELS } from '../src/providers/kling/models.js';
import { KLING_SIMULATOR_ACCOUNT } from '../src/providers/kling/wire.js';
import { HAILUO_DEFAULT_MODELS } from '../src/providers/minimax/models.js';
import { providerRig, type ProviderRig } from './helpers/provider-video.js';
import { createTask, isFinished, simVideoStats, waitForTask } from './helpers/video.js';

// Provider callbacks: with server.public_url set, a provider that calls back (Ark, Kling, Hailuo) is given
// the gateway's callback URL; a callback makes the gateway poll the task at once. Every poll
// interval here is ten minutes, so a task can only finish within the test through its callbacks.

const LONG = { poll_interval_ms: 500_000, callback_poll_interval_ms: 600_000, tick_ms: 20 };

/** The gateway's port is known once it listens: the public URL is set then (the config is live). */
function usePublicUrl(gw: TestGateway): void {
  gw.config.server.public_url = gw.url;
}

async function post(url: string, body: string, contentType = 'application/json') {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': contentType }, body });
  const text = await res.text();
  return { status: res.status, text, json: () => JSON.parse(text) };
}

describe('provider callbacks (Ark, through the embedded simulator)', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway({ tasks: LONG });
    usePublicUrl(gw);
  });
  afterAll(async () => gw?.close());

  it('finishes a task on the provider’s callbacks, without waiting for the poll interval', async () => {
    const { key } = await gw.createKey();
    const created = await createTask(gw.url, key, { model: 'sim-video', prompt: 'a corgi on a callback' });
    expect(created.status).toBe(200);
    const taskId = created.body.data.task_id;
    const row = await gw.services.tasks.repo.get(taskId);
    expect(row!.callback_token).toMatch(/^[0-9A-Za-z]{32}$/);
    // The fallback poll is the callback interval away — as created, that is: the first callback
    // comes 20% into the simulated run and moves the next poll to now, so on a slow machine it may
    // already have been handled when the row was read. Counted after the read: none sent then, none handled.
    const sentBefore = ((await (await fetch(`${gw.services.simulator!.url}/__sim/stats`)).json()) as { counts: Record<string, number> }).counts['ark.video.callback'] ?? 0;
    if (sentBefore === 0) expect(row!.next_poll_at).toBeGreaterThan(Date.now() + 500_000);

    const done = await waitForTask(gw.url, key, taskId, isFinished, 15_000);
    expect(done.status).toBe('SUCCESS');
    // One provider read per callback (queued → running, running → succeeded), not one per interval.
    const stats = await simVideoStats(gw.services.simulator!.url);
    expect(stats.tasks[row!.upstream_id].polls).toBeLessThanOrEqual(3);
    const counts = (await (await fetch(`${gw.services.simulator!.url}/__sim/stats`)).json()) as { counts: Record<string, number> };
    expect(counts.counts['ark.video.callback']).toBeGreaterThanOrEqual(1);
    // Each provider read is timed in the poll latency histogram.
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    const reads = /mediagate_video_poll_duration_seconds_count\{provider="simulator",outcome="ok"\} (\d+)/.exec(metrics);
    expect(Number(reads?.[1])).toBeGreaterThanOrEqual(1);
  });

  it('answers 404 with nothing more for an unknown or malformed token, 400 for a bad body, 200 for a finished task', async () => {
    for (const token of ['A'.repeat(32), 'short', 'x'.repeat(33)]) {
      const r = await post(`${gw.url}/v1/video/callbacks/${token}`, '{"status":"succeeded"}');
      expect(r.status).toBe(404);
      expect(r.json()).toMatchObject({ code: 'not_found', data: null });
      expect(r.text).not.toMatch(/task|cgt-/i);
    }
    const { key } = await gw.createKey();
    const created = await createTask(gw.url, key, { model: 'sim-video', prompt: 'another corgi' });
    const taskId = created.body.data.task_id;
    await waitForTask(gw.url, key, taskId, isFinished, 15_000);
    const token = (await gw.services.tasks.repo.get(taskId))!.callback_token!;
    const url = `${gw.url}/v1/video/callbacks/${token}`;
    expect((await post(url, '[1,2]')).status).toBe(400);
    expect((await post(url, '{not json')).status).toBe(400);
    expect((await post(url, 'status=ok', 'text/plain')).status).toBeGreaterThanOrEqual(400);
    expect((await post(url, 'status=ok', 'text/plain')).status).toBeLessThan(500);
    // A callback's body is never trusted: a "failed" callback for a finished task changes nothing.
    const r = await post(url, JSON.stringify({ id: taskId, status: 'failed' }));
    expect(r.status).toBe(200);
    expect((await gw.services.tasks.repo.get(taskId))!.status).toBe('SUCCESS');
  });

  it('echoes a URL check’s challenge (MiniMax verifies a callback URL that way)', async () => {
    const r = await post(`${gw.url}/v1/video/callbacks/${'b'.repeat(32)}`, '{"challenge":"c-123"}');
    expect(r.status).toBe(200);
    expect(r.json()).toEqual({ challenge: 'c-123' });
  });
});


/**
 * Creates a task on `rig`'s provider and waits for SUCCESS: with both poll intervals long (LONG),
 * only the provider's callbacks can finish it — at least one callback, at most 3 reads of the task.
 */
async function finishesOnCallbacks(rig: ProviderRig, provider: string, body: Record<string, unknown>): Promise<void> {
  const { key } = await rig.gw.createKey();
  const created = await createTask(rig.gw.url, key, body);
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  const done = await waitForTask(rig.gw.url, key, created.body.data.task_id, isFinished, 15_000);
  expect(done.status).toBe('SUCCESS');
  const counts = (await (await fetch(`${rig.sim.url}/__sim/stats`)).json()) as { counts: Record<string, number> };
  expect(counts.counts[`${provider}.video.callback`]).toBeGreaterThanOrEqual(1);
  expect(counts.counts[`${provider}.video.get`]).toBeLessThanOrEqual(3);
}
describe('provider callbacks (Kling)', () => {
  let rig: ProviderRig;
  beforeAll(async () => {
    rig = await providerRig('kling', KLING_DEFAULT_MODELS, { api_key: KLING_SIMULATOR_ACCOUNT.apiKey, api_secret: KLING_SIMULATOR_ACCOUNT.apiSecret });
    Object.assign(rig.gw.config.tasks, LONG);
    usePublicUrl(rig.gw);
  });
  afterAll(async () => rig?.close());

  it('finishes a Kling task on its callbacks, without waiting for the poll interval', async () => {
    await finishesOnCallbacks(rig, 'kling', { model: 'kling-v2-6', prompt: 'a corgi', duration: 5, resolution: '720p', ratio: '1:1' });
  });
});

describe('provider callbacks (MiniMax Hailuo)', () => {
  let rig: ProviderRig;
  beforeAll(async () => {
    rig = await providerRig('minimax', HAILUO_DEFAULT_MODELS, { api_key: 'minimax-secret-key-456' });
    Object.assign(rig.gw.config.tasks, LONG);
    usePublicUrl(rig.gw);
  });
  afterAll(async () => rig?.close());

  it('answers the URL check and finishes a Hailuo task on its callbacks, without waiting for the poll interval', async () => {
    // The simulator, like MiniMax, refuses the task unless the callback URL echoes its challenge.
    await finishesOnCallbacks(rig, 'minimax', { model: 'MiniMax-Hailuo-02', prompt: 'a corgi', duration: 6, resolution: '768p' });
  });
});

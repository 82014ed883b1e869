import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { startAdminGateway, type AdminGateway } from './helpers/admin.js';
import { createTask, waitForTask } from './helpers/video.js';
import { eventually } from './helpers/eventually.js';
import { SIMULATOR_MODELS } from '../src/config-file/defaults.js';
import { VEO_DEFAULT_MODELS } from '../src/providers/gemini/models.js';
import { HAILUO_DEFAULT_MODELS } from '../src/providers/minimax/models.js';
import { sampleVideo } from '../src/simulator/mp4.js';

// /admin/api/usage (filters, cursor pages, group_by, CSV), overview, tasks (list, detail with
// timeline, video content), channels (stats, test), config (masked) and reload.

describe('admin API: usage, tasks, channels, config', () => {
  let gw: AdminGateway;
  let reloads = 0;
  let key: { id: string; key: string };
  let other: { id: string; key: string };
  const upstreamSecret = 'sk-upstream-secret-0123456789';

  beforeAll(async () => {
    gw = await startAdminGateway(
      {},
      {
        admin: {
          reload: async () => {
            reloads++;
            return { ok: true };
          },
        },
      },
    );
    // A secret on the (simulator) channel, to check the config view masks it.
    gw.config.channels[0].api_key = upstreamSecret;
    key = await gw.createKey({ name: 'usage-a' });
    other = await gw.createKey({ name: 'usage-b' });
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key.key });
    for (let i = 0; i < 5; i++) await client.chat.completions.create({ model: 'sim-chat', messages: [{ role: 'user', content: `hi ${i}` }] });
    await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${other.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'nope', messages: [] }) });
    await gw.services.ledger.flush();
  });
  afterAll(async () => gw?.close());

  it('pages the ledger newest first with a cursor, each row once, filtered by key, model and status', async () => {
    const ids: number[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await gw.api('GET', `/admin/api/usage?key=${key.id}&limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.status).toBe(200);
      ids.push(...page.body.data.map((r: any) => r.id));
      expect(page.body.data.every((r: any) => r.key_id === key.id && r.model === 'sim-chat' && r.status === 200)).toBe(true);
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(ids.length).toBe(5);
    expect([...ids].sort((a, b) => b - a)).toEqual(ids);
    const errors = await gw.api('GET', '/admin/api/usage?status=4xx');
    expect(errors.body.data.length).toBeGreaterThanOrEqual(1);
    expect(errors.body.data.every((r: any) => r.status >= 400 && r.status < 500)).toBe(true);
    expect((await gw.api('GET', `/admin/api/usage?model=sim-chat&key=${other.id}`)).body.data).toEqual([]);
    const future = new Date(Date.now() + 3_600_000).toISOString();
    expect((await gw.api('GET', `/admin/api/usage?from=${future}`)).body.data).toEqual([]);
    expect((await gw.api('GET', `/admin/api/usage?to=${future}&key=${key.id}`)).body.data.length).toBe(5);
    for (const bad of ['status=abc', 'from=yesterday', 'limit=0', 'limit=5000', 'group_by=week', 'cursor=%%%', 'format=xml', 'key=a&key=b']) {
      const r = await gw.api('GET', `/admin/api/usage?${bad}`);
      expect(r.status, bad).toBe(400);
      expect(r.body.error.code).toBe('invalid_request');
    }
  });

  it('totals by key, model, hour and day', async () => {
    const byKey = await gw.api('GET', '/admin/api/usage?group_by=key');
    expect(byKey.body.data.find((g: any) => g.group === key.id)).toMatchObject({ requests: 5, errors: 0 });
    expect(byKey.body.data.find((g: any) => g.group === other.id).errors).toBeGreaterThanOrEqual(1);
    const byModel = await gw.api('GET', `/admin/api/usage?group_by=model&key=${key.id}`);
    expect(byModel.body.data).toEqual([expect.objectContaining({ group: 'sim-chat', requests: 5 })]);
    expect(Number(byModel.body.data[0].cost_usd)).toBeGreaterThan(0);
    for (const by of ['hour', 'day']) {
      const r = await gw.api('GET', `/admin/api/usage?group_by=${by}&key=${key.id}`);
      expect(r.body.data.reduce((s: number, g: any) => s + g.requests, 0)).toBe(5);
      expect(Date.parse(r.body.data[0].group)).toBeLessThanOrEqual(Date.now());
    }
  });

  it('exports the filtered ledger as CSV', async () => {
    const res = await fetch(`${gw.url}/admin/api/usage?format=csv&key=${key.id}`, { headers: { authorization: `Bearer ${gw.token}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
    const lines = (await res.text()).trim().split('\n');
    expect(lines[0]).toBe('id,created_at,key_id,model,channel,endpoint,status,input_units,output_units,cost_usd,billed_by,latency_ms,error');
    expect(lines.length).toBe(6);
    expect(lines.slice(1).every((l) => l.includes(`,${key.id},sim-chat,`))).toBe(true);
    // Each row says what it was billed by, after its cost (the ledger's own text).
    const rows = (await gw.api('GET', `/admin/api/usage?key=${key.id}`)).body.data as { id: number; billed_by: string }[];
    for (const r of rows) {
      expect(r.billed_by).toMatch(/^\d+ input tokens × \$0\.5\/M \+ \d+ output tokens × \$1\.5\/M$/);
      const line = lines.find((l) => l.startsWith(`${r.id},`))!;
      expect(line.split(',')[10]).toBe(r.billed_by);
    }
  });

  it('aggregates the overview over an hour, a day and a week', async () => {
    for (const range of ['hour', 'day', 'week']) {
      const r = await gw.api('GET', `/admin/api/overview?range=${range}`);
      expect(r.status).toBe(200);
      expect(r.body.t.length).toBe(r.body.requests.length);
      expect(r.body.totals.requests).toBeGreaterThanOrEqual(6);
      expect(r.body.requests.reduce((a: number, b: number) => a + b, 0)).toBe(r.body.totals.requests);
      expect(Object.keys(r.body.errors).some((s) => Number(s) >= 400)).toBe(true);
      expect(r.body.spend_by_model.find((m: any) => m.model === 'sim-chat').requests).toBe(5);
      expect(r.body.p99_ms.some((v: number | null) => v !== null)).toBe(true);
    }
    expect((await gw.api('GET', '/admin/api/overview?range=year')).status).toBe(400);
  });

  it('lists tasks of every key and shows one with its timeline, cost and playable video', async () => {
    const created = await createTask(gw.url, key.key, { model: 'sim-video', prompt: 'a corgi' });
    expect(created.status).toBe(200);
    const id = created.body.data.task_id;
    await waitForTask(gw.url, key.key, id, (r) => r.status === 'SUCCESS');
    const list = await gw.api('GET', `/admin/api/tasks?key=${key.id}&status=SUCCESS&provider=simulator`);
    expect(list.body.data.map((t: any) => t.task_id)).toContain(id);
    expect((await gw.api('GET', `/admin/api/tasks?provider=openai`)).body.data).toEqual([]);
    expect((await gw.api('GET', '/admin/api/tasks?status=DONE')).status).toBe(400);
    const detail = await eventually(async () => {
      const d = await gw.api('GET', `/admin/api/tasks/${id}`);
      return d.body.timeline?.at(-1)?.to === 'SUCCESS' && d;
    });
    expect(detail.body).toMatchObject({ key_id: key.id, model: 'sim-video', channel: 'simulator', provider: 'simulator', upstream_id: id });
    expect(detail.body.task.status).toBe('SUCCESS');
    expect(detail.body.timeline[0]).toMatchObject({ from: null, to: 'SUBMITTED' });
    const path = detail.body.timeline.map((e: any) => e.to);
    expect(path.indexOf('SUBMITTED')).toBeLessThan(path.indexOf('SUCCESS'));
    const video = await fetch(`${gw.url}/admin/api/tasks/${id}/content`, { headers: { authorization: `Bearer ${gw.token}`, range: 'bytes=0-7' } });
    expect(video.status).toBe(206);
    const head = Buffer.from(await video.arrayBuffer());
    expect(head.subarray(4, 8).toString('latin1')).toBe('ftyp');
    expect((await gw.api('GET', '/admin/api/tasks/no-such-task')).status).toBe(404);
    expect((await gw.api('GET', '/admin/api/tasks/bad%20id')).status).toBe(400);
  });

  it('shows each channel with its stats and breaker, and tests one for real', async () => {
    const list = await gw.api('GET', '/admin/api/channels');
    const sim = list.body.data.find((c: any) => c.name === 'simulator');
    expect(sim).toMatchObject({ type: 'simulator', breaker: 'closed' });
    expect(sim.last_5m.requests).toBeGreaterThanOrEqual(5);
    expect(sim.last_60m.p50_ms).toBeGreaterThan(0);
    const test = await gw.api('POST', '/admin/api/channels/simulator/test');
    expect(test.status).toBe(200);
    expect(test.body).toMatchObject({ channel: 'simulator', ok: true, model: expect.any(String), status: 200 });
    expect(test.body.latency_ms).toBeGreaterThanOrEqual(0);
    expect((await gw.api('POST', '/admin/api/channels/nope/test')).status).toBe(404);
  });

  it('shows the configuration with every secret masked, and reloads', async () => {
    const res = await gw.api('GET', '/admin/api/config');
    expect(res.status).toBe(200);
    const text = JSON.stringify(res.body);
    expect(text).not.toContain(upstreamSecret);
    expect(res.body.channels[0].api_key).toBe('********');
    expect(res.body.admin.enabled).toBe(true);
    const reloaded = await gw.api('POST', '/admin/api/reload');
    expect(reloaded.status).toBe(200);
    expect(reloads).toBe(1);
    const audit = await gw.api('GET', '/admin/api/audit');
    expect(audit.body.data.map((e: any) => e.action)).toEqual(expect.arrayContaining(['config.reload', 'channel.test']));
  });
});

// Veo's and Hailuo's results are fetched with the channel's key (no link to hand out): the admin
// surface streams them through the same content source as the public /content route.
describe('admin API: the video of a task only the channel key can fetch', () => {
  let gw: AdminGateway;
  const models = { ...SIMULATOR_MODELS, ...VEO_DEFAULT_MODELS, ...HAILUO_DEFAULT_MODELS };

  beforeAll(async () => {
    gw = await startAdminGateway({ channels: [{ name: 'simulator', type: 'simulator', api_key: 'sim-channel-secret-0123456789', models: Object.keys(models) }], models });
  });
  afterAll(async () => gw?.close());

  const video = (id: string, headers: Record<string, string> = {}) => fetch(`${gw.url}/admin/api/tasks/${id}/content`, { headers: { authorization: `Bearer ${gw.token}`, ...headers } });

  it.each([
    ['veo-3.1-fast-generate-preview', { duration: 4, resolution: '720p' }],
    ['MiniMax-Hailuo-02', { duration: 6, resolution: '768p' }],
  ])('%s: streams it whole and by Range, with admin auth only', async (model, params) => {
    const owner = await gw.createKey();
    const created = await createTask(gw.url, owner.key, { model, prompt: 'a corgi', ...params });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const id = created.body.data.task_id;
    const done = await waitForTask(gw.url, owner.key, id, (r) => r.status === 'SUCCESS' || r.status === 'FAILURE');
    expect(done.status).toBe('SUCCESS');
    // The client is shown the gateway's /content URL: there is no provider link.
    expect(done.fail_reason).toMatch(/\/v1\/video\/generations\/[^/]+\/content$/);

    const whole = await video(id);
    expect(whole.status).toBe(200);
    expect(whole.headers.get('content-type')).toBe('video/mp4');
    expect(whole.headers.get('cache-control')).toBe('private, no-store');
    expect(Buffer.from(await whole.arrayBuffer()).equals(sampleVideo())).toBe(true);

    const part = await video(id, { range: 'bytes=100-199' });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 100-199/${sampleVideo().length}`);
    expect(Buffer.from(await part.arrayBuffer()).equals(sampleVideo().subarray(100, 200))).toBe(true);
    expect([...whole.headers.values(), ...part.headers.values()].join(' ')).not.toContain('sim-channel-secret-0123456789');

    // Admin auth, not the owner's key.
    const asOwner = await fetch(`${gw.url}/admin/api/tasks/${id}/content`, { headers: { authorization: `Bearer ${owner.key}` } });
    expect(asOwner.status).toBe(401);
    expect(((await asOwner.json()) as any).error.code).toBe('invalid_admin_token');
  });

  it('answers 409 for a task that has not finished and 404 for none, in the admin shape', async () => {
    const owner = await gw.createKey();
    const created = await createTask(gw.url, owner.key, { model: 'veo-3.1-fast-generate-preview', prompt: 'a corgi [stuck]', duration: 4, resolution: '720p' });
    expect(created.status).toBe(200);
    const open = await video(created.body.data.task_id);
    expect(open.status).toBe(409);
    expect(((await open.json()) as any).error.code).toBe('conflict');
    const none = await video('no-such-task');
    expect(none.status).toBe(404);
    expect(((await none.json()) as any).error.code).toBe('not_found');
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { startGateway, type TestGateway } from './helpers/gateway.js';
import { buildApp } from '../src/app.js';
import { createServices } from '../src/services.js';
import { validateConfig } from '../src/config-file/loader.js';
import { applyConfig } from '../src/cluster/reload.js';

describe('GET /v1/models', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway();
  });
  afterAll(async () => gw.close());

  it('answers the documented shape with every field typed', async () => {
    const { key } = await gw.createKey();
    const res = await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const body = (await res.json()) as Record<string, any>;
    expect(Object.keys(body).sort()).toEqual(['data', 'object', 'success']);
    expect(body.object).toBe('list');
    expect(body.success).toBe(true);
    expect(Array.isArray(body.data)).toBe(true);
    expect(body.data.length).toBe(Object.keys(gw.config.models).length);
    for (const m of body.data) {
      expect(Object.keys(m).sort()).toEqual(['created', 'id', 'object', 'owned_by', 'supported_endpoint_types']);
      expect(typeof m.id).toBe('string');
      expect(m.object).toBe('model');
      expect(Number.isInteger(m.created)).toBe(true);
      expect(m.created).toBeGreaterThan(1_600_000_000);
      expect(m.created).toBeLessThan(4_000_000_000);
      expect(typeof m.owned_by).toBe('string');
      expect(Array.isArray(m.supported_endpoint_types)).toBe(true);
      expect(m.supported_endpoint_types.length).toBeGreaterThan(0);
      for (const t of m.supported_endpoint_types) expect(typeof t).toBe('string');
    }
    const ids = body.data.map((m: { id: string }) => m.id);
    expect(ids).toEqual([...ids].sort());
    const byId = Object.fromEntries(body.data.map((m: any) => [m.id, m]));
    expect(byId['sim-chat'].supported_endpoint_types).toEqual(['openai', 'anthropic', 'openai-response', 'gemini']);
    expect(byId['sim-image'].supported_endpoint_types).toEqual(['image-generation']);
    expect(byId['doubao-seedance-1-0-pro-250528'].supported_endpoint_types).toEqual(['openai-video']);
    expect(byId['doubao-seedance-1-0-pro-250528'].owned_by).toBe('volcengine');
  });

  it('shows a key with an allow-list exactly those models', async () => {
    const { key } = await gw.createKey({ models: ['sim-video', 'sim-chat'] });
    const body = (await (await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } })).json()) as any;
    expect(body.data.map((m: any) => m.id)).toEqual(['sim-chat', 'sim-video']);
  });

  it('works with the official openai package', async () => {
    const { key } = await gw.createKey();
    const client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const ids: string[] = [];
    for await (const m of client.models.list()) ids.push(m.id);
    expect(ids).toContain('sim-chat');
    expect(ids.length).toBe(Object.keys(gw.config.models).length);
    const one = await client.models.retrieve('sim-image');
    expect(one.id).toBe('sim-image');
    await expect(client.models.retrieve('no-such-model')).rejects.toMatchObject({ status: 404 });
  });

  it('keeps created stable across a restart on the same database', async () => {
    const { key } = await gw.createKey();
    const first = (await (await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } })).json()) as any;
    await new Promise((r) => setTimeout(r, 1100));
    const services = await createServices(gw.config, { noSimulator: true });
    const app = buildApp(services, { logStream: { write: () => undefined } as any });
    try {
      const url = await app.listen({ host: '127.0.0.1', port: 0 });
      const again = (await (await fetch(`${url}/v1/models`, { headers: { authorization: `Bearer ${key}` } })).json()) as any;
      expect(again.data.map((m: any) => [m.id, m.created])).toEqual(first.data.map((m: any) => [m.id, m.created]));
    } finally {
      await app.close();
      await services.close();
    }
  });

  it('lists only models with an enabled channel and uses the configured created', async () => {
    const g2 = await startGateway({
      channels: [
        { name: 'simulator', type: 'simulator', models: ['sim-chat'] },
        { name: 'off', type: 'simulator', enabled: false, models: ['sim-image'] },
      ],
      models: { 'sim-chat': { kind: 'chat', owned_by: 'simulator', created: 1700000000 }, 'sim-image': { kind: 'image', owned_by: 'simulator' } },
    });
    try {
      const { key } = await g2.createKey();
      const body = (await (await fetch(`${g2.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } })).json()) as any;
      expect(body.data).toEqual([{ id: 'sim-chat', object: 'model', created: 1700000000, owned_by: 'simulator', supported_endpoint_types: ['openai', 'anthropic', 'openai-response', 'gemini'] }]);
    } finally {
      await g2.close();
    }
  });

  // The list is answered from bytes prepared per allow-list: what changes the list must show at once.
  it('shows a changed allow-list and a reloaded config on the next request', async () => {
    const list = async (key: string) => ((await (await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } })).json()) as any).data.map((m: any) => m.id);
    const limited = await gw.createKey({ models: ['sim-chat'] });
    const open = await gw.createKey();
    expect(await list(limited.key)).toEqual(['sim-chat']);
    const before = await list(open.key);
    expect(await list(open.key)).toEqual(before);

    // A key change (what the admin API does: update the row, forget cached keys).
    expect(await gw.services.keys.update(limited.id, { models: JSON.stringify(['sim-chat', 'sim-image']) })).toBe(true);
    gw.services.authenticator.invalidate();
    expect(await list(limited.key)).toEqual(['sim-chat', 'sim-image']);

    // A reload that adds a model: every key without an allow-list sees it.
    const raw = structuredClone(gw.config) as any;
    for (const ch of raw.channels) if (ch.type === 'simulator') delete ch.base_url;
    raw.models['sim-chat-extra'] = { kind: 'chat', owned_by: 'simulator' };
    raw.channels[0].models.push('sim-chat-extra');
    await applyConfig(gw.services, validateConfig(raw, 'reloaded config'));
    expect(await list(open.key)).toEqual([...before, 'sim-chat-extra'].sort());
    expect(await list(limited.key)).toEqual(['sim-chat', 'sim-image']);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import type { TestGateway } from './helpers/gateway.js';
import { imageGateway, usageRows } from './helpers/images.js';
import { expectPng } from './helpers/png.js';
import { startSimulator, type Simulator } from '../src/simulator/server.js';

// POST /v1/images/generations through the official SDK, over three wire formats: the simulator
// channel type, an `openai` channel pointed at the simulator, and an `ark` (Seedream) channel
// pointed at the simulator. Every image must decode as a PNG of the requested size.

const BACKENDS = [
  { backend: 'simulator channel', model: 'sim-image', channel: 'sim', perImage: 20_000 },
  { backend: 'openai channel', model: 'oa-image', channel: 'oa', perImage: 40_000 },
  { backend: 'ark channel', model: 'doubao-seedream-4-0-250828', channel: 'ark', perImage: 30_000 },
];

describe('POST /v1/images/generations', () => {
  let sim: Simulator;
  let gw: TestGateway;
  beforeAll(async () => {
    sim = await startSimulator({ port: 0 });
    gw = await imageGateway(sim);
  });
  afterAll(async () => {
    await gw.close();
    await sim.close();
  });

  describe.each(BACKENDS)('via the $backend', ({ model, channel, perImage }) => {
    it('returns URLs that download as PNGs of the requested size, charges per image and writes one ledger row', async () => {
      const { id, key } = await gw.createKey({ creditMicros: 1_000_000 });
      const client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
      const res = await client.images.generate({ model, prompt: 'a lighthouse at dusk', n: 2, size: '64x48', response_format: 'url' });
      expect(res.created).toBeGreaterThan(1_600_000_000);
      expect(res.data).toHaveLength(2);
      for (const d of res.data!) {
        expect(d.b64_json).toBeUndefined();
        expect(d.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/__sim\/files\/.+\.png$/);
        const img = await fetch(d.url!);
        expect(img.status).toBe(200);
        expect(img.headers.get('content-type')).toBe('image/png');
        expectPng(Buffer.from(await img.arrayBuffer()), 64, 48);
      }
      expect(res.data![0].url).not.toBe(res.data![1].url);
      expect(await gw.services.credit.spendable(id)).toBe(1_000_000 - 2 * perImage);
      const rows = await usageRows(gw, id);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ model, channel, endpoint: 'images.generations', status: 200, input_units: 0, output_units: 2, cost_micros: 2 * perImage });
    });

    it('returns base64 PNGs with response_format b64_json', async () => {
      const { id, key } = await gw.createKey({ creditMicros: 1_000_000 });
      const client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
      const res = await client.images.generate({ model, prompt: 'three red apples', size: '40x30', response_format: 'b64_json' });
      expect(res.data).toHaveLength(1);
      expect(res.data![0].url).toBeUndefined();
      expectPng(Buffer.from(res.data![0].b64_json!, 'base64'), 40, 30);
      expect(res.usage).toBeDefined();
      expect(await gw.services.credit.spendable(id)).toBe(1_000_000 - perImage);
      const rows = await usageRows(gw, id);
      expect(rows.map((r) => [r.endpoint, r.status, r.output_units])).toEqual([['images.generations', 200, 1]]);
    });
  });

  it('passes the answer of an openai upstream through in OpenAI\'s shape (revised_prompt, usage)', async () => {
    const { key } = await gw.createKey();
    const res = await fetch(`${gw.url}/v1/images/generations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'oa-image', prompt: 'a quiet harbour', size: '16x16', response_format: 'b64_json', user: 'end-user-1', quality: 'low' }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as any;
    expect(Object.keys(body).sort()).toEqual(['created', 'data', 'usage']);
    expect(Object.keys(body.data[0]).sort()).toEqual(['b64_json', 'revised_prompt']);
    expect(body.data[0].revised_prompt).toBe('a quiet harbour');
    expect(body.usage).toMatchObject({ output_tokens: expect.any(Number), total_tokens: expect.any(Number) });
  });

  it('maps Seedream\'s usage to OpenAI\'s and never adds a watermark unless asked', async () => {
    const { key } = await gw.createKey();
    const res = await fetch(`${gw.url}/v1/images/generations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'doubao-seedream-4-0-250828', prompt: 'a paper boat', size: '32x32' }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as any;
    // Ark answers url by default; its per-image `size` is not part of OpenAI's Image.
    expect(Object.keys(body.data[0])).toEqual(['url']);
    expect(body.usage).toEqual({ input_tokens: 0, input_tokens_details: { text_tokens: 0, image_tokens: 0 }, output_tokens: 4, total_tokens: 4 });
  });

  it('lists the image models with supported_endpoint_types ["image-generation"]', async () => {
    const { key } = await gw.createKey();
    const body = (await (await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } })).json()) as any;
    const byId = Object.fromEntries(body.data.map((m: any) => [m.id, m]));
    for (const { model } of BACKENDS) expect(byId[model].supported_endpoint_types).toEqual(['image-generation']);
    expect(byId['doubao-seedream-4-0-250828'].owned_by).toBe('volcengine');
  });
});

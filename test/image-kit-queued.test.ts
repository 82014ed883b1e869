import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI, { toFile } from 'openai';
import { startGateway, type TestGateway } from './helpers/gateway.js';
import { usageRows } from './helpers/images.js';
import { expectPng, photo } from './helpers/png.js';
import { startSimulator, type Simulator } from '../src/simulator/server.js';

// The kit's images engine on a queued provider (Black Forest Labs on its simulator part): the
// synchronous call hides submit-and-poll; n fans out into n tasks; both response formats whatever
// the provider returns; a 400 naming the allowed values before any upstream call; and a task that
// outlives the wait — a 504, the hold kept until the task ends, then settled by what it made (one row, charged once).

const CREDIT = 1_000_000;
const PRICE = 40_000;

async function until(check: () => Promise<boolean>, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('kit images: a queued provider behind the synchronous call', () => {
  let sim: Simulator;
  let gw: TestGateway;
  const client = (key: string) => new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  const creates = async () => ((await (await fetch(`${sim.url}/__sim/stats`)).json()) as { counts: Record<string, number> }).counts['bfl.images.create'] ?? 0;

  beforeAll(async () => {
    sim = await startSimulator({ port: 0, videoSeconds: 2 });
    gw = await startGateway({
      simulator: { embedded: false },
      channels: [{ name: 'bfl', type: 'bfl', base_url: `${sim.url}/bfl`, api_key: 'bfl-test-secret-key', models: ['flux-pro-1.1', 'flux-kontext-pro', 'flux-short-wait'], model_map: { 'flux-short-wait': 'flux-pro-1.1' } }],
      models: {
        'flux-pro-1.1': { kind: 'image', price: { per_image: PRICE / 1e6 }, wait: { interval_ms: 50 } },
        'flux-kontext-pro': { kind: 'image', price: { per_image: PRICE / 1e6 }, wait: { interval_ms: 50 } },
        // The simulator's tasks take 400 ms: this model's clients wait 100 ms.
        'flux-short-wait': { kind: 'image', price: { per_image: PRICE / 1e6 }, wait: { interval_ms: 50, timeout_s: 0.1 } },
      },
    });
  });
  afterAll(async () => {
    await gw?.close();
    await sim?.close();
  });

  it('generates n images as n polled tasks, as gateway URLs or base64 whatever the provider returns', async () => {
    const { id, key } = await gw.createKey({ creditMicros: CREDIT });
    const res = await client(key).images.generate({ model: 'flux-pro-1.1', prompt: 'a lighthouse', n: 2, size: '320x256', response_format: 'b64_json' });
    expect(res.data).toHaveLength(2);
    for (const d of res.data!) expectPng(Buffer.from(d.b64_json!, 'base64'), 320, 256);
    expect(await gw.services.credit.spendable(id)).toBe(CREDIT - 2 * PRICE);
    const rows = await usageRows(gw, id);
    expect(rows).toMatchObject([{ model: 'flux-pro-1.1', endpoint: 'images.generations', status: 200, output_units: 2, cost_micros: 2 * PRICE }]);

    const url = await client(key).images.generate({ model: 'flux-pro-1.1', prompt: 'a lighthouse', size: '256x256', response_format: 'url' });
    const img = await fetch(url.data![0].url!);
    expectPng(Buffer.from(await img.arrayBuffer()), 256, 256);
  });

  it('stops waiting for a client that leaves, and charges it what the task makes', async () => {
    const { id, key } = await gw.createKey({ creditMicros: CREDIT });
    const ac = new AbortController();
    const gets = async () => ((await (await fetch(`${sim.url}/__sim/stats`)).json()) as { counts: Record<string, number> }).counts['bfl.images.get'] ?? 0;
    const before = await gets();
    const sent = fetch(`${gw.url}/v1/images/generations`, { method: 'POST', signal: ac.signal, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'flux-pro-1.1', prompt: 'leaving', size: '256x256' }) }).catch(() => null);
    await until(async () => (await gets()) > before);
    ac.abort();
    await sent;
    await until(async () => (await usageRows(gw, id)).length === 1);
    expect(await usageRows(gw, id)).toMatchObject([{ status: 499, output_units: 1, cost_micros: PRICE }]);
    expect(await gw.services.credit.spendable(id)).toBe(CREDIT - PRICE);
  });

  it('edits with Kontext (the upload inlined as base64), refuses what the model cannot take before any upstream call', async () => {
    const { id, key } = await gw.createKey({ creditMicros: CREDIT });
    const res = await client(key).images.edit({ model: 'flux-kontext-pro', image: await toFile(photo(24, 20), 'p.png', { type: 'image/png' }), prompt: 'watercolour', size: '1024x1024', response_format: 'b64_json' });
    expectPng(Buffer.from(res.data![0].b64_json!, 'base64'), 1024, 1024);
    const before = await creates();
    const refusals: [Record<string, unknown>, string, RegExp][] = [
      [{ model: 'flux-pro-1.1', size: '100x100' }, 'size', /256 to 1440 per side, multiples of 32/],
      [{ model: 'flux-kontext-pro', size: '640x480' }, 'size', /1024x1024, 1248x832/],
      [{ model: 'flux-pro-1.1', quality: 'hd' }, 'quality', /no quality setting/],
      [{ model: 'flux-pro-1.1', n: 5 }, 'n', /from 1 to 4/],
      [{ model: 'flux-pro-1.1', style: 'vivid' }, 'style', /safety_tolerance, prompt_upsampling/],
      [{ model: 'flux-kontext-pro', aspect_ratio: '5:1' }, 'aspect_ratio', /1:1, 3:2/],
    ];
    for (const [body, param, message] of refusals) {
      const r = await fetch(`${gw.url}/v1/images/generations`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ prompt: 'x', ...body }) });
      const e = (await r.json()) as { error: { param: string; message: string; type: string } };
      expect(r.status, JSON.stringify(e)).toBe(400);
      expect(e.error).toMatchObject({ param, type: 'invalid_request_error' });
      expect(e.error.message).toMatch(message);
    }
    expect(await creates()).toBe(before);
    expect(await gw.services.credit.spendable(id)).toBe(CREDIT - PRICE);
  });

  it('answers 504 past the wait, keeps the hold until the task ends, then charges what it made once', async () => {
    const { id, key } = await gw.createKey({ creditMicros: CREDIT });
    const r = await fetch(`${gw.url}/v1/images/generations`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'flux-short-wait', prompt: 'slow', n: 2, size: '256x256' }) });
    const body = (await r.json()) as { error: { code: string; type: string; message: string } };
    expect(r.status).toBe(504);
    expect(body.error).toMatchObject({ code: 'upstream_timeout', type: 'server_error' });
    expect(body.error.message).toMatch(/left to finish/);
    // Held, not charged, not released: the provider is still making the images.
    expect(await gw.services.credit.heldCount(id)).toBe(1);
    await until(async () => (await usageRows(gw, id)).length === 1);
    expect(await usageRows(gw, id)).toMatchObject([{ model: 'flux-short-wait', status: 504, output_units: 2, cost_micros: 2 * PRICE }]);
    expect(await gw.services.credit.spendable(id)).toBe(CREDIT - 2 * PRICE);
  });

  it('settles a task that fails after the wait at nothing', async () => {
    const { id, key } = await gw.createKey({ creditMicros: CREDIT });
    const r = await fetch(`${gw.url}/v1/images/generations`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'flux-short-wait', prompt: 'slow [fail]', size: '256x256' }) });
    expect(r.status).toBe(504);
    await until(async () => (await usageRows(gw, id)).length === 1);
    expect(await usageRows(gw, id)).toMatchObject([{ status: 504, output_units: 0, cost_micros: 0 }]);
    expect(await gw.services.credit.heldCount(id)).toBe(0);
    expect(await gw.services.credit.spendable(id)).toBe(CREDIT);
  });

});

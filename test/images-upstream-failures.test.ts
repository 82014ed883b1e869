import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import OpenAI, { toFile } from 'openai';
import { startGateway, type TestGateway } from './helpers/gateway.js';
import { usageRows } from './helpers/images.js';
import { expectPng } from './helpers/png.js';
import { encodePng } from '../src/simulator/png.js';
import { startSimulator, type Simulator } from '../src/simulator/server.js';

// What upstream failures cost and how they surface: the relay falls back to the next channel
// (re-streaming uploaded files), a request that fails everywhere is refunded and logged with its
// status, and Seedream's partial answers are charged for the images actually returned.

describe('images: upstream failures', () => {
  let sim: Simulator;
  let gw: TestGateway;
  beforeAll(async () => {
    sim = await startSimulator({ port: 0 });
    gw = await startGateway({
      simulator: { embedded: false },
      relay: { max_attempts: 3, breaker_failures: 100 },
      channels: [
        { name: 'first', type: 'openai', base_url: `${sim.url}/v1`, api_key: 'sk-first', priority: 0, models: ['fb-image'] },
        { name: 'second', type: 'simulator', base_url: sim.url, priority: 1, models: ['fb-image'] },
        { name: 'ark', type: 'ark', base_url: sim.url, api_key: 'ark-key', models: ['doubao-seedream-4-0-250828'] },
      ],
      models: {
        'fb-image': { kind: 'image', owned_by: 'simulator', price: { per_image: 0.01 } },
        'doubao-seedream-4-0-250828': { kind: 'image', owned_by: 'volcengine', price: { per_image: 0.03 } },
      },
    });
  });
  afterEach(async () => {
    await fetch(`${sim.url}/__sim/faults`, { method: 'DELETE' });
  });
  afterAll(async () => {
    await gw.close();
    await sim.close();
  });

  const fault = (body: Record<string, unknown>) =>
    fetch(`${sim.url}/__sim/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

  const generate = (key: string, body: Record<string, unknown>) =>
    fetch(`${gw.url}/v1/images/generations`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });

  it('falls back to the next channel when the first answers 500, and charges once', async () => {
    const { id, key } = await gw.createKey({ creditMicros: 1_000_000 });
    await fault({ match: 'openai.images.generate', kind: 'status', status: 500, count: 1 });
    const res = await generate(key, { model: 'fb-image', prompt: 'x', size: '8x8', n: 2, response_format: 'b64_json' });
    expect(res.status).toBe(200);
    const body = (await res.json()) as any;
    expect(body.data).toHaveLength(2);
    expect(await gw.services.credit.spendable(id)).toBe(1_000_000 - 20_000);
    expect((await usageRows(gw, id)).map((r) => [r.channel, r.status, r.output_units])).toEqual([['second', 200, 2]]);
  });

  it('re-streams the uploaded files to the next channel after a failed edit attempt', async () => {
    const { key } = await gw.createKey();
    await fault({ match: 'openai.images.edit', kind: 'malformed', count: 1 });
    const client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const res = await client.images.edit({
      model: 'fb-image',
      image: await toFile(encodePng(12, 10, new Uint8Array(12 * 10 * 3).fill(200)), 'a.png'),
      prompt: 'again',
      response_format: 'b64_json',
    });
    expectPng(Buffer.from(res.data![0].b64_json!, 'base64'), 12, 10);
  });

  it('answers 502 when every channel fails, returns the held credit and logs the failure', async () => {
    const { id, key } = await gw.createKey({ creditMicros: 1_000_000 });
    await fault({ match: 'openai.images.generate', kind: 'status', status: 503, count: 5 });
    const res = await generate(key, { model: 'fb-image', prompt: 'x', n: 3 });
    expect(res.status).toBe(502);
    expect(((await res.json()) as any).error.code).toBe('upstream_error');
    expect(await gw.services.credit.spendable(id)).toBe(1_000_000);
    expect(await gw.services.credit.heldCount(id)).toBe(0);
    expect((await usageRows(gw, id)).map((r) => [r.endpoint, r.status, r.output_units, r.cost_micros])).toEqual([['images.generations', 502, 0, 0]]);
  });

  it('answers 429 with Retry-After when every channel is rate limited', async () => {
    const { key } = await gw.createKey();
    await fault({ match: 'openai.images.generate', kind: 'status', status: 429, count: 5 });
    const res = await generate(key, { model: 'fb-image', prompt: 'x' });
    expect(res.status).toBe(429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(((await res.json()) as any).error.code).toBe('rate_limit_exceeded');
  });

  it('charges a Seedream request for the images returned when one of its n calls failed', async () => {
    const { id, key } = await gw.createKey({ creditMicros: 1_000_000 });
    await fault({ match: 'ark.images.generate', kind: 'status', status: 500, count: 1 });
    const res = await generate(key, { model: 'doubao-seedream-4-0-250828', prompt: 'two kites', n: 2, size: '8x8', response_format: 'b64_json' });
    expect(res.status).toBe(200);
    const body = (await res.json()) as any;
    expect(body.data).toHaveLength(1);
    expectPng(Buffer.from(body.data[0].b64_json, 'base64'), 8, 8);
    expect(await gw.services.credit.spendable(id)).toBe(1_000_000 - 30_000);
    expect((await usageRows(gw, id)).map((r) => [r.channel, r.status, r.output_units, r.cost_micros])).toEqual([['ark', 200, 1, 30_000]]);
  });

  it('asks Seedream for a batch in one call when the client opts into sequential_image_generation', async () => {
    const { key } = await gw.createKey();
    const before = ((await (await fetch(`${sim.url}/__sim/stats`)).json()) as any).counts['ark.images.generate'] ?? 0;
    const res = await generate(key, { model: 'doubao-seedream-4-0-250828', prompt: 'four seasons', n: 3, size: '8x8', sequential_image_generation: 'auto' });
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).data).toHaveLength(3);
    const after = ((await (await fetch(`${sim.url}/__sim/stats`)).json()) as any).counts['ark.images.generate'];
    expect(after - before).toBe(1);
  });

  it('answers 400 when Seedream refuses every image as sensitive, and charges nothing', async () => {
    const { id, key } = await gw.createKey({ creditMicros: 1_000_000 });
    const res = await generate(key, { model: 'doubao-seedream-4-0-250828', prompt: '[sim:sensitive] something', size: '8x8' });
    expect(res.status).toBe(400);
    const body = (await res.json()) as any;
    expect(body.error.code).toBe('content_policy_violation');
    expect(body.error.message).toMatch(/OutputImageSensitiveContentDetected/);
    expect(await gw.services.credit.spendable(id)).toBe(1_000_000);
  });

  it('releases the hold and logs 499 when the client goes away while the upstream works', async () => {
    const { id, key } = await gw.createKey({ creditMicros: 1_000_000 });
    await fault({ match: 'openai.images.generate', kind: 'latency', ms: 3000, count: 1 });
    const ac = new AbortController();
    const pending = fetch(`${gw.url}/v1/images/generations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'fb-image', prompt: 'slow', n: 2 }),
      signal: ac.signal,
    }).catch((e: unknown) => e);
    // Wait until the hold exists (the request reached the relay), then hang up.
    const deadline = Date.now() + 10_000;
    while ((await gw.services.credit.heldCount(id)) === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    ac.abort();
    await pending;
    let rows: Awaited<ReturnType<typeof usageRows>> = [];
    while (Date.now() < deadline) {
      rows = await usageRows(gw, id);
      if (rows.length) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(rows.map((r) => [r.status, r.output_units, r.cost_micros])).toEqual([[499, 0, 0]]);
    expect(await gw.services.credit.spendable(id)).toBe(1_000_000);
    expect(await gw.services.credit.heldCount(id)).toBe(0);
  });

  it('never shows an upstream key in an error', async () => {
    const { key } = await gw.createKey();
    await fault({ match: 'openai.images.generate', kind: 'status', status: 401, count: 1 });
    const res = await generate(key, { model: 'fb-image', prompt: 'x' });
    const text = await res.text();
    expect(text).not.toContain('sk-first');
    expect(text).not.toContain(key);
    expect(gw.logs.join('')).not.toContain('sk-first');
  });
});

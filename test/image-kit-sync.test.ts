import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI, { toFile } from 'openai';
import { startGateway, type TestGateway } from './helpers/gateway.js';
import { usageRows } from './helpers/images.js';
import { expectPng, photo } from './helpers/png.js';
import { startSimulator, type Simulator } from '../src/simulator/server.js';

// The kit's images engine on synchronous providers (Gemini image models and Imagen on their
// simulator parts): base64 answers given as gateway URLs or base64, token billing from the
// provider's usage, per-image billing, edits with the upload inlined, a moderation refusal, and a
// reply of text only (an upstream error, not a refusal).

const CREDIT = 10_000_000;

describe('kit images: synchronous providers', () => {
  let sim: Simulator;
  let gw: TestGateway;
  const client = (key: string) => new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });

  beforeAll(async () => {
    sim = await startSimulator({ port: 0 });
    gw = await startGateway({
      simulator: { embedded: false },
      channels: [{ name: 'gemini', type: 'gemini', base_url: sim.url, api_key: 'gemini-test-secret', models: ['gemini-2.5-flash-image', 'imagen-4.0-fast-generate-001'] }],
      models: {
        'gemini-2.5-flash-image': { kind: 'image', price: { input_per_million: 0.3, output_per_million: 30 } },
        'imagen-4.0-fast-generate-001': { kind: 'image', price: { per_image: 0.02 } },
      },
    });
  });
  afterAll(async () => {
    await gw?.close();
    await sim?.close();
  });

  it('answers a Gemini image as base64 or a gateway URL, charged by the tokens the provider reports', async () => {
    const { id, key } = await gw.createKey({ creditMicros: CREDIT });
    const res = await client(key).images.generate({ model: 'gemini-2.5-flash-image', prompt: 'a red kite', size: '1344x768', response_format: 'url' });
    expect(res.data![0].url).toMatch(new RegExp(`^${gw.url}/v1/images/files/`));
    expectPng(Buffer.from(await (await fetch(res.data![0].url!)).arrayBuffer()), 1344, 768);
    const rows = await usageRows(gw, id);
    // 3 prompt tokens at $0.30/M and 1,290 image tokens at $30/M.
    expect(rows).toMatchObject([{ status: 200, output_units: 1, cost_micros: Math.ceil(3 * 0.3 + 1290 * 30) }]);
    const b64 = await client(key).images.generate({ model: 'gemini-2.5-flash-image', prompt: 'a red kite', n: 2, response_format: 'b64_json' });
    expect(b64.data).toHaveLength(2);
    expectPng(Buffer.from(b64.data![1].b64_json!, 'base64'), 1024, 1024);
    expect((await fetch(`${gw.url}/v1/images/files/1000000000-${'0'.repeat(32)}.png`)).status).toBe(404);
  });

  it('edits with the upload inlined, and refuses a size outside the model’s table naming it', async () => {
    const { key } = await gw.createKey({ creditMicros: CREDIT });
    const res = await client(key).images.edit({ model: 'gemini-2.5-flash-image', image: await toFile(photo(20, 20), 'p.png', { type: 'image/png' }), prompt: 'in pencil', response_format: 'b64_json' });
    expectPng(Buffer.from(res.data![0].b64_json!, 'base64'), 1024, 1024);
    const err = await client(key).images.generate({ model: 'gemini-2.5-flash-image', prompt: 'x', size: '640x480' }).catch((e: InstanceType<typeof OpenAI.APIError>) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(400);
    expect((err as InstanceType<typeof OpenAI.APIError>).message).toMatch(/1024x1024, 832x1248/);
  });

  it('answers a Gemini reply of text without an image as 502 upstream_error, not a refusal, with nothing charged', async () => {
    const { id, key } = await gw.createKey({ creditMicros: CREDIT });
    const r = await fetch(`${gw.url}/v1/images/generations`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gemini-2.5-flash-image', prompt: 'a kite [text-only]' }) });
    const body = (await r.json()) as { error: { code: string; type: string; message: string } };
    expect(r.status, JSON.stringify(body)).toBe(502);
    expect(body.error).toMatchObject({ code: 'upstream_error', type: 'server_error' });
    expect(body.error.message).toMatch(/without an image/);
    expect(await gw.services.credit.spendable(id)).toBe(CREDIT);
  });

  it('makes n Imagen images in one call, charged per image; a refused prompt is a 400 with nothing charged', async () => {
    const { id, key } = await gw.createKey({ creditMicros: CREDIT });
    const res = await client(key).images.generate({ model: 'imagen-4.0-fast-generate-001', prompt: 'a fox', n: 3, size: '1408x768', response_format: 'b64_json' });
    expect(res.data).toHaveLength(3);
    expectPng(Buffer.from(res.data![2].b64_json!, 'base64'), 1408, 768);
    expect(await gw.services.credit.spendable(id)).toBe(CREDIT - 3 * 20_000);
    const refused = await fetch(`${gw.url}/v1/images/generations`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gemini-2.5-flash-image', prompt: 'x [sim:sensitive]' }) });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('content_policy_violation');
    expect(await gw.services.credit.spendable(id)).toBe(CREDIT - 3 * 20_000);
  });
});

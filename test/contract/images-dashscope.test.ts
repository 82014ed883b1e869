import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI, { toFile } from 'openai';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { usageRows } from '../helpers/images.js';
import { expectPng, photo } from '../helpers/png.js';
import { startSimulator, type Simulator } from '../../src/simulator/server.js';

// The image contract for DashScope (Wan and Qwen-Image text-to-image), a `dashscope` channel
// against the simulator's part, through the gateway with the official OpenAI SDK: every call is
// a queued task polled behind the synchronous call. Two images as b64_json and as a url that
// downloads, Qwen-Image's one-image tasks fanned out, the sizes each model takes refused before
// any upstream call, and Wan 2.5's image edit (up to three uploads, one task). The failure and refusal of a task are in the shared table
// (images-kit-providers.test.ts).

const CREDIT = 1_000_000;
const PRICE = 10_000;
const SECRET = 'sk-dashscope-contract-secret';

describe('image contract: DashScope (Wan, Qwen-Image) on its simulator part', () => {
  let sim: Simulator;
  let gw: TestGateway;
  const client = (key: string) => new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0, timeout: 30_000 });
  const count = async (route: string) => ((await (await fetch(`${sim.url}/__sim/stats`)).json()) as { counts: Record<string, number> }).counts[route] ?? 0;
  const creates = () => count('dashscope.images.create');

  beforeAll(async () => {
    sim = await startSimulator({ videoSeconds: 0.5 });
    const ids = ['wan2.2-t2i-flash', 'wan2.5-t2i-preview', 'qwen-image-plus', 'wan2.5-i2i-preview'];
    const models = Object.fromEntries(ids.map((id) => [id, { kind: 'image', owned_by: 'alibaba', price: { per_image: PRICE / 1e6 }, wait: { interval_ms: 50, timeout_s: 20 } }]));
    gw = await startGateway({ simulator: { embedded: false }, channels: [{ name: 'dashscope', type: 'dashscope', base_url: sim.url, api_key: SECRET, models: ids }], models });
  });
  afterAll(async () => {
    await gw?.close();
    await sim?.close();
  });

  it('generates two images in one task, as b64_json and as a url that downloads, and charges them', async () => {
    const { id, key } = await gw.createKey({ creditMicros: CREDIT });
    const before = await creates();
    const b64 = await client(key).images.generate({ model: 'wan2.2-t2i-flash', prompt: 'a red boat', n: 2, size: '768x512', response_format: 'b64_json' });
    expect(b64.data).toHaveLength(2);
    for (const d of b64.data!) expectPng(Buffer.from(d.b64_json!, 'base64'), 768, 512);
    expect(await creates()).toBe(before + 1);
    const url = await client(key).images.generate({ model: 'wan2.2-t2i-flash', prompt: 'a blue boat', n: 2, response_format: 'url' });
    const file = await fetch(url.data![1].url!);
    expect(file.status).toBe(200);
    expectPng(Buffer.from(await file.arrayBuffer()), 1024, 1024);
    expect(await gw.services.credit.spendable(id)).toBe(CREDIT - 4 * PRICE);
    expect((await usageRows(gw, id)).map((r) => r.output_units)).toEqual([2, 2]);
  });

  it('fans Qwen-Image out into one-image tasks and sizes it by aspect ratio', async () => {
    const { id, key } = await gw.createKey({ creditMicros: CREDIT });
    const before = await creates();
    const res = await client(key).images.generate({ model: 'qwen-image-plus', prompt: 'a poster', n: 2, response_format: 'b64_json', aspect_ratio: '16:9' } as never);
    expect(res.data).toHaveLength(2);
    for (const d of res.data!) expectPng(Buffer.from(d.b64_json!, 'base64'), 1664, 928);
    expect(await creates()).toBe(before + 2);
    const wan25 = await client(key).images.generate({ model: 'wan2.5-t2i-preview', prompt: 'a poster', size: '960x1696', response_format: 'b64_json' });
    expectPng(Buffer.from(wan25.data![0].b64_json!, 'base64'), 960, 1696);
    expect(await gw.services.credit.spendable(id)).toBe(CREDIT - 3 * PRICE);
  });

  it('edits two uploads in one Wan 2.5 task, sized as asked, and refuses a fourth upload naming the limit', async () => {
    const { id, key } = await gw.createKey({ creditMicros: CREDIT });
    const before = await count('dashscope.images.edit');
    const upload = async (w: number) => toFile(photo(w, 64), `p${w}.png`, { type: 'image/png' });
    const res = await client(key).images.edit({ model: 'wan2.5-i2i-preview', prompt: 'put the hat on the cat', image: [await upload(96), await upload(80)], size: '1024x768' as never, n: 2, response_format: 'b64_json' });
    expect(res.data).toHaveLength(2);
    for (const d of res.data!) expectPng(Buffer.from(d.b64_json!, 'base64'), 1024, 768);
    expect(await count('dashscope.images.edit')).toBe(before + 1);
    expect(await gw.services.credit.spendable(id)).toBe(CREDIT - 2 * PRICE);
    const err = await client(key)
      .images.edit({ model: 'wan2.5-i2i-preview', prompt: 'x', image: await Promise.all([96, 90, 80, 70].map(upload)) })
      .then(() => null, (e: unknown) => e as InstanceType<typeof OpenAI.APIError>);
    expect(err?.status).toBe(400);
    expect(err?.message).toMatch(/3/);
    expect(await count('dashscope.images.edit')).toBe(before + 1);
    const gen = await client(key).images.generate({ model: 'wan2.5-i2i-preview', prompt: 'x' }).then(() => null, (e: unknown) => e as InstanceType<typeof OpenAI.APIError>);
    expect(gen?.status).toBe(400);
    expect(gen?.message).toMatch(/edits images only.*wan2\.5-t2i-preview/);
  });

  it.each([
    { model: 'wan2.2-t2i-flash', body: { size: '256x256' }, param: 'size', says: 'WxH from 512 to 1440 per side' },
    { model: 'qwen-image-plus', body: { size: '1024x1024' }, param: 'size', says: '1664x928, 1472x1140, 1328x1328, 1140x1472, 928x1664' },
    { model: 'wan2.2-t2i-flash', body: { n: 5 }, param: 'n', says: 'n must be from 1 to 4' },
    { model: 'wan2.2-t2i-flash', body: { seed: 2147483648 }, param: 'seed', says: '0 to 2147483647' },
    { model: 'wan2.2-t2i-flash', body: { watermark: 'yes' }, param: 'watermark', says: 'true or false' },
    { model: 'wan2.2-t2i-flash', body: { aspect_ratio: '16:9' }, param: 'aspect_ratio', says: 'takes no aspect_ratio' },
  ])('refuses $param $body on $model with a 400 naming what it takes, before any upstream call', async ({ model, body, param, says }) => {
    const { id, key } = await gw.createKey({ creditMicros: CREDIT });
    const before = await creates();
    const res = await fetch(`${gw.url}/v1/images/generations`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model, prompt: 'x', ...body }) });
    expect(res.status).toBe(400);
    const err = ((await res.json()) as { error: { message: string; param: string } }).error;
    expect(err.param).toBe(param);
    expect(err.message).toContain(says);
    expect(await creates()).toBe(before);
    expect(await gw.services.credit.spendable(id)).toBe(CREDIT);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHmac } from 'node:crypto';
import { startSimulator, type Simulator } from '../../src/simulator/server.js';
import { KLING_SIMULATOR_ACCOUNT } from '../../src/providers/kling/wire.js';
import { eventually } from '../helpers/video.js';
import { expectPng, mask, photo } from '../helpers/png.js';

// The simulator's image parts of Kling, MiniMax, Ideogram, Recraft, Stability, fal and Replicate,
// spoken to directly in each provider's wire format.

describe('simulator: image providers', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ videoSeconds: 0.5 });
  });
  afterAll(async () => sim.close());

  async function json(method: string, path: string, headers: Record<string, string>, body?: unknown) {
    const res = await fetch(`${sim.url}${path}`, { method, headers: { 'content-type': 'application/json', ...headers }, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as any };
  }
  async function form(path: string, headers: Record<string, string>, fields: Record<string, string | Buffer>) {
    const fd = new FormData();
    for (const [k, v] of Object.entries(fields)) {
      if (typeof v === 'string') fd.append(k, v);
      else fd.append(k, new Blob([v], { type: 'image/png' }), `${k}.png`);
    }
    return fetch(`${sim.url}${path}`, { method: 'POST', headers, body: fd });
  }
  const png = async (url: string) => Buffer.from(await (await fetch(url)).arrayBuffer());

  it('Kling: a JWT-signed image task on the path OpenAI shares, submitted → succeed with n images', async () => {
    const enc = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
    const now = Math.floor(Date.now() / 1000);
    const head = `${enc({ alg: 'HS256', typ: 'JWT' })}.${enc({ iss: KLING_SIMULATOR_ACCOUNT.apiKey, exp: now + 600, nbf: now - 5 })}`;
    const auth = { authorization: `Bearer ${head}.${createHmac('sha256', KLING_SIMULATOR_ACCOUNT.apiSecret).update(head).digest('base64url')}` };
    const bad = await json('POST', '/v1/images/generations', auth, { model_name: 'kling-v2-1', prompt: 'p', aspect_ratio: '5:4' });
    expect(bad).toMatchObject({ status: 400, body: { code: 1201, message: expect.stringContaining('16:9, 9:16, 1:1, 4:3, 3:4, 3:2, 2:3, 21:9') } });
    expect((await json('POST', '/v1/images/generations', auth, { model_name: 'kling-v2-1', prompt: 'p', image: 'https://example.com/a.png' })).body.message).toMatch(/image is not supported by kling-v2-1/);
    const created = await json('POST', '/v1/images/generations', auth, { model_name: 'kling-v2', prompt: 'a fox', n: 2, aspect_ratio: '1:1', resolution: '1k' });
    expect(created.body).toMatchObject({ code: 0, data: { task_status: 'submitted' } });
    const done = await eventually(async () => {
      const t = await json('GET', `/v1/images/generations/${created.body.data.task_id}`, auth);
      return t.body.data.task_status === 'succeed' && t.body.data;
    }, 10_000);
    expect(done.task_result.images).toHaveLength(2);
    expectPng(await png(done.task_result.images[1].url), 1024, 1024);
    const failed = await json('POST', '/v1/images/generations', auth, { prompt: '[moderation] x' });
    const f = await eventually(async () => (await json('GET', `/v1/images/generations/${failed.body.data.task_id}`, auth)).body.data.task_status === 'failed', 10_000);
    expect(f).toBe(true);
    // A plain bearer key on the same path is OpenAI's.
    const openai = await json('POST', '/v1/images/generations', { authorization: 'Bearer sk-x' }, { prompt: 'p', response_format: 'b64_json' });
    expect(openai.body.data[0].b64_json).toBeTruthy();
  });

  it('MiniMax: urls or base64 with metadata; errors in base_resp', async () => {
    const auth = { authorization: 'Bearer mm' };
    const ok = await json('POST', '/v1/image_generation', auth, { model: 'image-01', prompt: 'a cat', n: 2, aspect_ratio: '16:9', response_format: 'base64' });
    expect(ok.body).toMatchObject({ base_resp: { status_code: 0 }, metadata: { success_count: '2', failed_count: '0' } });
    expectPng(Buffer.from(ok.body.data.image_base64[0], 'base64'), 1280, 720);
    const px = await json('POST', '/v1/image_generation', auth, { model: 'image-01', prompt: 'a cat', width: 1024, height: 512 });
    expectPng(await png(px.body.data.image_urls[0]), 1024, 512);
    expect((await json('POST', '/v1/image_generation', auth, { model: 'image-01-live', prompt: 'p', aspect_ratio: '21:9' })).body.base_resp).toMatchObject({ status_code: 2013, status_msg: expect.stringContaining('1:1, 16:9') });
    expect((await json('POST', '/v1/image_generation', auth, { model: 'image-01', prompt: '[moderation]' })).body.base_resp.status_code).toBe(1027);
    expect((await json('POST', '/v1/image_generation', {}, { model: 'image-01', prompt: 'p' })).body.base_resp.status_code).toBe(1004);
  });

  it('Ideogram: multipart generate, edit with a same-size mask, remix; Api-Key; 422 safety', async () => {
    const key = { 'api-key': 'ik' };
    const gen = await form('/v1/ideogram-v3/generate', key, { prompt: 'a sign', aspect_ratio: '16x9', num_images: '2', rendering_speed: 'TURBO' });
    const g = (await gen.json()) as any;
    expect(g.data).toHaveLength(2);
    expect(g.data[0]).toMatchObject({ resolution: '1312x736', is_image_safe: true });
    expectPng(await png(g.data[0].url), 1312, 736);
    const wrong = await form('/v1/ideogram-v3/generate', key, { prompt: 'x', aspect_ratio: '16:9' });
    expect(wrong.status).toBe(400);
    expect(((await wrong.json()) as any).error).toContain('16x9');
    const edit = (await (await form('/v1/ideogram-v3/edit', key, { prompt: 'hat', image: photo(64, 48), mask: mask(64, 48) })).json()) as any;
    expectPng(await png(edit.data[0].url), 64, 48);
    expect((await form('/v1/ideogram-v3/edit', key, { prompt: 'hat', image: photo(64, 48), mask: mask(32, 32) })).status).toBe(400);
    expect((await form('/v1/ideogram-v3/remix', key, { prompt: 'hat', image: photo(64, 48), image_weight: '70' })).status).toBe(200);
    expect((await form('/v1/ideogram-v3/generate', key, { prompt: '[moderation]' })).status).toBe(422);
    expect((await form('/v1/ideogram-v3/generate', {}, { prompt: 'p' })).status).toBe(401);
  });

  it('Recraft: OpenAI-like generate under /recraft, sizes per model, inpaint multipart', async () => {
    const auth = { authorization: 'Bearer rk' };
    const ok = await json('POST', '/recraft/v1/images/generations', auth, { prompt: 'a logo', model: 'recraftv3', size: '16:9', n: 2, response_format: 'b64_json' });
    expect(ok.body.data).toHaveLength(2);
    expectPng(Buffer.from(ok.body.data[0].b64_json, 'base64'), 1820, 1024);
    const bad = await json('POST', '/recraft/v1/images/generations', auth, { prompt: 'p', model: 'recraftv4', size: '1820x1024' });
    expect(bad).toMatchObject({ status: 400, body: { code: 'invalid_request', message: expect.stringContaining('1344x768') } });
    const inpaint = await form('/recraft/v1/images/inpaint', auth, { prompt: 'sky', image: photo(40, 30), mask: mask(40, 30), response_format: 'url' });
    expectPng(await png(((await inpaint.json()) as any).data[0].url), 40, 30);
    const i2i = await json('POST', '/recraft/v1/images/imageToImage', auth, { prompt: 'sky', strength: 0.4, image: `data:image/png;base64,${photo(48, 32).toString('base64')}`, response_format: 'b64_json' });
    expectPng(Buffer.from(i2i.body.data[0].b64_json, 'base64'), 48, 32);
    expect((await json('POST', '/recraft/v1/images/imageToImage', auth, { prompt: 'sky', image: 'https://example.com/a.png' })).body.message).toContain('strength');
    expect((await json('POST', '/recraft/v1/images/generations', auth, { prompt: '[moderation]' })).status).toBe(400);
  });

  it('Stability: image bytes with finish-reason and seed headers, or JSON; 403 content_moderation', async () => {
    const auth = { authorization: 'Bearer sk' };
    const res = await form('/v2beta/stable-image/generate/core', { ...auth, accept: 'image/*' }, { prompt: 'a lake', aspect_ratio: '16:9', seed: '42' });
    expect(res.headers.get('finish-reason')).toBe('SUCCESS');
    expect(res.headers.get('seed')).toBe('42');
    expectPng(Buffer.from(await res.arrayBuffer()), 1360, 768);
    const j = (await (await form('/v2beta/stable-image/generate/sd3', { ...auth, accept: 'application/json' }, { prompt: 'x', model: 'sd3.5-medium' })).json()) as any;
    expect(j).toMatchObject({ finish_reason: 'SUCCESS' });
    expect((await form('/v2beta/stable-image/generate/sd3', auth, { prompt: 'x', model: 'sd3.5-flash', negative_prompt: 'y' })).status).toBe(400);
    const inpaint = await form('/v2beta/stable-image/edit/inpaint', auth, { prompt: 'x', image: photo(80, 64), mask: mask(80, 64) });
    expectPng(Buffer.from(await inpaint.arrayBuffer()), 80, 64);
    const mod = await form('/v2beta/stable-image/generate/ultra', auth, { prompt: '[moderation]' });
    expect(mod.status).toBe(403);
    expect(((await mod.json()) as any).name).toBe('content_moderation');
  });

  it('fal: queue submit, status at the app root, result; invalid input fails at the end', async () => {
    const auth = { authorization: 'Key fk' };
    const sub = await json('POST', '/fal-ai/flux/dev', auth, { prompt: 'a boat', num_images: 2, image_size: 'landscape_4_3' });
    expect(sub.body.status_url).toBe(`${sim.url}/fal-ai/flux/requests/${sub.body.request_id}/status`);
    await eventually(async () => (await json('GET', new URL(sub.body.status_url).pathname, auth)).body.status === 'COMPLETED', 10_000);
    const out = (await json('GET', new URL(sub.body.response_url).pathname, auth)).body;
    expect(out.images).toHaveLength(2);
    expect(out.has_nsfw_concepts).toEqual([false, false]);
    expectPng(await png(out.images[0].url), 1024, 768);
    const bad = await json('POST', '/fal-ai/flux/schnell', auth, { prompt: 'p', image_size: 'huge' });
    const st = await eventually(async () => {
      const s = (await json('GET', new URL(bad.body.status_url).pathname, auth)).body;
      return s.status === 'COMPLETED' && s;
    }, 10_000);
    expect(st.error).toContain('square_hd');
    expect((await json('GET', new URL(bad.body.response_url).pathname, auth)).status).toBe(422);
    expect((await json('POST', '/fal-ai/flux/dev', {}, { prompt: 'p' })).status).toBe(401);
  });

  it('Replicate: predictions starting → succeeded; Prefer: wait; 422 input errors; NSFW failure', async () => {
    const auth = { authorization: 'Bearer r8' };
    const created = await json('POST', '/v1/models/black-forest-labs/flux-schnell/predictions', auth, { input: { prompt: 'a tree', num_outputs: 2, aspect_ratio: '16:9' } });
    expect(created).toMatchObject({ status: 201, body: { status: 'starting', output: null } });
    const done = await eventually(async () => {
      const p = (await json('GET', `/v1/predictions/${created.body.id}`, auth)).body;
      return p.status === 'succeeded' && p;
    }, 10_000);
    expect(done.output).toHaveLength(2);
    expectPng(await png(done.output[0]), 1344, 768);
    const waited = await json('POST', '/v1/models/black-forest-labs/flux-1.1-pro/predictions', { ...auth, prefer: 'wait' }, { input: { prompt: 'p' } });
    expect(waited.body.status).toBe('succeeded');
    expect(typeof waited.body.output).toBe('string');
    const bad = await json('POST', '/v1/models/black-forest-labs/flux-schnell/predictions', auth, { input: { prompt: 'p', aspect_ratio: '7:3' } });
    expect(bad).toMatchObject({ status: 422, body: { invalid_fields: [{ field: 'aspect_ratio' }] } });
    expect(bad.body.detail).toContain('"16:9"');
    const nsfw = await json('POST', '/v1/models/black-forest-labs/flux-dev/predictions', { ...auth, prefer: 'wait=5' }, { input: { prompt: '[moderation]' } });
    expect(nsfw.body).toMatchObject({ status: 'failed', error: expect.stringContaining('NSFW') });
  });
});

import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI, { toFile } from 'openai';
import type { TestGateway } from './helpers/gateway.js';
import { imageGateway, usageRows } from './helpers/images.js';
import { encodePng } from '../src/simulator/png.js';
import { startSimulator, type Simulator } from '../src/simulator/server.js';

// Every bad image request is a 4xx in OpenAI's error shape, before any upstream call or charge:
// non-image files, oversized files and bodies, missing prompt or image, too many files, wrong
// types, unknown / forbidden / non-image models. Limits here are tiny so the cases stay cheap.

const MAX_FILE = 10 * 1024;

function png(w: number, h: number): Buffer {
  return encodePng(w, h, new Uint8Array(w * h * 3).fill(90));
}

/** A valid PNG header followed by `bytes` of filler: an image by its magic bytes, of any size. */
function bigPng(bytes: number): Buffer {
  return Buffer.concat([png(4, 4), Buffer.alloc(bytes, 1)]);
}

interface Part {
  name: string;
  value: string | Buffer;
  filename?: string;
  type?: string;
}

function form(parts: Part[]): FormData {
  const f = new FormData();
  for (const p of parts) {
    if (typeof p.value === 'string' && p.filename === undefined) f.append(p.name, p.value);
    else f.append(p.name, new Blob([p.value], { type: p.type ?? 'application/octet-stream' }), p.filename ?? 'file.bin');
  }
  return f;
}

const image = (value: Buffer = png(8, 8), name = 'image'): Part => ({ name, value, filename: 'in.png', type: 'image/png' });

describe('images: bad input', () => {
  let sim: Simulator;
  let gw: TestGateway;
  let key: string;
  let keyId: string;
  let tmp: string;
  const savedTmp = process.env.TMPDIR;

  beforeAll(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'mg-bad-test-'));
    process.env.TMPDIR = tmp;
    sim = await startSimulator({ port: 0 });
    gw = await imageGateway(sim, { images: { max_files: 2, max_file_mb: MAX_FILE / (1024 * 1024), max_total_mb: (2.5 * MAX_FILE) / (1024 * 1024), max_n: 4 } });
    ({ key, id: keyId } = await gw.createKey({ creditMicros: 1_000_000, models: ['sim-image', 'sim-chat', 'doubao-seedream-4-0-250828'] }));
  });
  afterAll(async () => {
    await gw.close();
    await sim.close();
    if (savedTmp === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = savedTmp;
    rmSync(tmp, { recursive: true, force: true });
  });

  async function edit(parts: Part[], k = key) {
    const res = await fetch(`${gw.url}/v1/images/edits`, { method: 'POST', headers: { authorization: `Bearer ${k}` }, body: form(parts) });
    return { status: res.status, body: (await res.json()) as any };
  }

  async function generate(body: unknown, k = key) {
    const res = await fetch(`${gw.url}/v1/images/generations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${k}`, 'content-type': 'application/json' },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  }

  function expectOpenAIError(r: { status: number; body: any }, status: number, code: string, param?: string | null) {
    expect(r.status).toBe(status);
    expect(Object.keys(r.body)).toEqual(['error']);
    expect(Object.keys(r.body.error).sort()).toEqual(['code', 'message', 'param', 'type']);
    expect(r.body.error.code).toBe(code);
    expect(typeof r.body.error.message).toBe('string');
    if (param !== undefined) expect(r.body.error.param).toBe(param);
  }

  describe('edits', () => {
    const base = (): Part[] => [{ name: 'model', value: 'sim-image' }, { name: 'prompt', value: 'make it blue' }];

    it('refuses a file that is not a PNG, JPEG or WEBP image, whatever its declared type', async () => {
      const r = await edit([...base(), { name: 'image', value: Buffer.from('hello, I am text pretending to be a PNG'), filename: 'fake.png', type: 'image/png' }]);
      expectOpenAIError(r, 400, 'invalid_request', 'image');
      expect(r.body.error.message).toMatch(/not a PNG, JPEG or WEBP/);
    });

    it('refuses an empty file', async () => {
      expectOpenAIError(await edit([...base(), image(Buffer.alloc(0))]), 400, 'invalid_request', 'image');
    });

    it('refuses a mask that is not a PNG', async () => {
      const jpeg = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(32)]);
      expectOpenAIError(await edit([...base(), image(), { name: 'mask', value: jpeg, filename: 'm.jpg', type: 'image/jpeg' }]), 400, 'invalid_request', 'mask');
    });

    it('answers 413 for a file over the per-file limit, and the client reads the answer', async () => {
      const r = await edit([...base(), image(bigPng(20 * MAX_FILE))]);
      expectOpenAIError(r, 413, 'request_too_large');
      expect(r.body.error.message).toMatch(/larger than/);
    });

    it('answers 413 when the files together are over the total limit', async () => {
      const nine = bigPng(MAX_FILE - 200);
      const r = await edit([...base(), image(nine), image(nine), { name: 'mask', value: nine, filename: 'm.png', type: 'image/png' }]);
      expectOpenAIError(r, 413, 'request_too_large');
    });

    it('answers 400 when the prompt is missing or blank', async () => {
      expectOpenAIError(await edit([{ name: 'model', value: 'sim-image' }, image()]), 400, 'invalid_request', 'prompt');
      expectOpenAIError(await edit([{ name: 'model', value: 'sim-image' }, { name: 'prompt', value: '   ' }, image()]), 400, 'invalid_request', 'prompt');
    });

    it('answers 400 when no image is sent, or the image is a text field', async () => {
      expectOpenAIError(await edit(base()), 400, 'invalid_request', 'image');
      expectOpenAIError(await edit([...base(), { name: 'image', value: 'https://example.com/a.png' }]), 400, 'invalid_request', 'image');
    });

    it('answers 400 for more image files than allowed, and for two masks', async () => {
      expectOpenAIError(await edit([...base(), image(), image(), image()]), 400, 'invalid_request', 'image');
      const m = { name: 'mask', value: png(8, 8), filename: 'm.png', type: 'image/png' };
      expectOpenAIError(await edit([...base(), image(), m, m]), 400, 'invalid_request', 'mask');
    });

    it('answers 400 for an unexpected file field', async () => {
      expectOpenAIError(await edit([...base(), image(), { name: 'picture', value: png(8, 8), filename: 'p.png', type: 'image/png' }]), 400, 'invalid_request', 'picture');
    });

    it('answers 400 for wrong field values', async () => {
      expectOpenAIError(await edit([...base(), image(), { name: 'n', value: 'two' }]), 400, 'invalid_request', 'n');
      expectOpenAIError(await edit([...base(), image(), { name: 'n', value: '5' }]), 400, 'invalid_request', 'n');
      expectOpenAIError(await edit([...base(), image(), { name: 'response_format', value: 'gif' }]), 400, 'invalid_request', 'response_format');
      expectOpenAIError(await edit([...base(), image(), { name: 'size', value: 'huge' }]), 400, 'invalid_request', 'size');
      expectOpenAIError(await edit([...base(), image(), { name: 'stream', value: 'true' }]), 400, 'invalid_request', 'stream');
    });

    it('answers 404 for an unknown model, 403 for a model the key may not use, 400 for a chat model', async () => {
      expectOpenAIError(await edit([{ name: 'model', value: 'no-such-model' }, { name: 'prompt', value: 'x' }, image()]), 404, 'model_not_found', 'model');
      expectOpenAIError(await edit([{ name: 'model', value: 'oa-image' }, { name: 'prompt', value: 'x' }, image()]), 403, 'model_not_allowed');
      expectOpenAIError(await edit([{ name: 'model', value: 'sim-chat' }, { name: 'prompt', value: 'x' }, image()]), 400, 'invalid_request', 'model');
      expectOpenAIError(await edit([{ name: 'prompt', value: 'x' }, image()]), 400, 'invalid_request', 'model');
    });

    it('answers 400 for a body that is not multipart, or malformed multipart', async () => {
      const json = await fetch(`${gw.url}/v1/images/edits`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'sim-image', prompt: 'x' }),
      });
      expectOpenAIError({ status: json.status, body: await json.json() }, 400, 'invalid_request');
      const broken = await fetch(`${gw.url}/v1/images/edits`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'multipart/form-data; boundary=xyz' },
        body: '--xyz\r\nContent-Disposition: form-data; name="prompt"\r\n\r\nhalf a part',
      });
      expectOpenAIError({ status: broken.status, body: await broken.json() }, 400, 'invalid_request');
    });

    it('works through the SDK and reports the SDK\'s error classes', async () => {
      const client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
      await expect(client.images.edit({ model: 'sim-image', prompt: 'x', image: await toFile(Buffer.from('not an image'), 'a.png') })).rejects.toBeInstanceOf(OpenAI.BadRequestError);
      await expect(client.images.edit({ model: 'missing', prompt: 'x', image: await toFile(png(4, 4), 'a.png') })).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    });
  });

  describe('generations', () => {
    it('answers 400 for a missing or wrongly typed prompt', async () => {
      expectOpenAIError(await generate({ model: 'sim-image' }), 400, 'invalid_request', 'prompt');
      expectOpenAIError(await generate({ model: 'sim-image', prompt: 42 }), 400, 'invalid_request', 'prompt');
      expectOpenAIError(await generate({ model: 'sim-image', prompt: '' }), 400, 'invalid_request', 'prompt');
    });

    it('answers 400 for wrongly typed or out-of-range parameters', async () => {
      expectOpenAIError(await generate({ model: 'sim-image', prompt: 'x', n: '2' }), 400, 'invalid_request', 'n');
      expectOpenAIError(await generate({ model: 'sim-image', prompt: 'x', n: 0 }), 400, 'invalid_request', 'n');
      expectOpenAIError(await generate({ model: 'sim-image', prompt: 'x', n: 1.5 }), 400, 'invalid_request', 'n');
      expectOpenAIError(await generate({ model: 'sim-image', prompt: 'x', n: 5 }), 400, 'invalid_request', 'n');
      expectOpenAIError(await generate({ model: 'sim-image', prompt: 'x', size: 1024 }), 400, 'invalid_request', 'size');
      expectOpenAIError(await generate({ model: 'sim-image', prompt: 'x', quality: 'ultra' }), 400, 'invalid_request', 'quality');
      expectOpenAIError(await generate({ model: 'sim-image', prompt: 'x', response_format: 'png' }), 400, 'invalid_request', 'response_format');
      expectOpenAIError(await generate({ model: 'sim-image', prompt: 'x', stream: true }), 400, 'invalid_request', 'stream');
      expectOpenAIError(await generate({ model: 7, prompt: 'x' }), 400, 'invalid_request', 'model');
      expectOpenAIError(await generate({ prompt: 'x' }), 400, 'invalid_request', 'model');
    });

    it('answers 400 for a body that is not a JSON object', async () => {
      expectOpenAIError(await generate([1, 2]), 400, 'invalid_request');
      expectOpenAIError(await generate('{"model": '), 400, 'invalid_request');
      expectOpenAIError(await generate('"just a string"'), 400, 'invalid_request');
    });

    it('answers 404 / 403 / 400 for unknown, forbidden and non-image models', async () => {
      expectOpenAIError(await generate({ model: 'no-such-model', prompt: 'x' }), 404, 'model_not_found', 'model');
      expectOpenAIError(await generate({ model: 'oa-image', prompt: 'x' }), 403, 'model_not_allowed');
      expectOpenAIError(await generate({ model: 'sim-chat', prompt: 'x' }), 400, 'invalid_request', 'model');
    });
  });

  it('never charged, never called upstream, and left no upload behind for any of the above', async () => {
    expect(await gw.services.credit.spendable(keyId)).toBe(1_000_000);
    // Each refused request has its one usage row: the refusal's status, nothing used, nothing charged.
    const rows = await usageRows(gw, keyId);
    expect(rows.length).toBeGreaterThan(0);
    for (const r of rows) {
      expect(r.status).toBeGreaterThanOrEqual(400);
      expect(r.status).toBeLessThan(500);
      expect(r).toMatchObject({ channel: '', input_units: 0, output_units: 0, cost_micros: 0 });
    }
    const counts = (await (await fetch(`${sim.url}/__sim/stats`)).json()) as { counts: Record<string, number> };
    expect(counts.counts['openai.images.generate'] ?? 0).toBe(0);
    expect(counts.counts['openai.images.edit'] ?? 0).toBe(0);
    expect(readdirSync(tmp).filter((n) => n.startsWith('mediagate-upload-'))).toEqual([]);
  });

  it('answers 403 insufficient_quota when the credit does not cover n images, and calls no upstream', async () => {
    const poor = await gw.createKey({ creditMicros: 30_000 });
    expectOpenAIError(await generate({ model: 'sim-image', prompt: 'x', n: 2 }, poor.key), 403, 'insufficient_quota');
    expect(await gw.services.credit.spendable(poor.id)).toBe(30_000);
    const ok = await generate({ model: 'sim-image', prompt: 'x', n: 1, size: '8x8' }, poor.key);
    expect(ok.status).toBe(200);
    expect(await gw.services.credit.spendable(poor.id)).toBe(10_000);
  });
});

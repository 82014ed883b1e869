import { createReadStream, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI, { toFile } from 'openai';
import type { TestGateway } from './helpers/gateway.js';
import { imageGateway, usageRows } from './helpers/images.js';
import { expectPng, mask, photo } from './helpers/png.js';
import { startSimulator, type Simulator } from '../src/simulator/server.js';

// POST /v1/images/edits through the official SDK: real PNG files made here, with and without a
// mask, one or several images, streamed by the gateway to an upstream that checks them.


const uploadsLeft = (dir: string) => readdirSync(dir).filter((n) => n.startsWith('mediagate-upload-'));

describe('POST /v1/images/edits', () => {
  let sim: Simulator;
  let gw: TestGateway;
  let tmp: string;
  const savedTmp = process.env.TMPDIR;
  beforeAll(async () => {
    // Uploads are spooled under os.tmpdir(): a private one shows they are all removed.
    tmp = mkdtempSync(join(tmpdir(), 'mg-edit-test-'));
    process.env.TMPDIR = tmp;
    sim = await startSimulator({ port: 0 });
    gw = await imageGateway(sim);
  });
  afterAll(async () => {
    await gw.close();
    await sim.close();
    if (savedTmp === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = savedTmp;
    rmSync(tmp, { recursive: true, force: true });
  });

  describe.each([
    { backend: 'simulator channel', model: 'sim-image', channel: 'sim', perImage: 20_000 },
    { backend: 'openai channel', model: 'oa-image', channel: 'oa', perImage: 40_000 },
  ])('via the $backend', ({ model, channel, perImage }) => {
    it('edits a real PNG: the answer has the input\'s size, is charged per image and writes one ledger row', async () => {
      const { id, key } = await gw.createKey({ creditMicros: 1_000_000 });
      const client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
      const res = await client.images.edit({
        model,
        image: await toFile(photo(24, 20), 'photo.png', { type: 'image/png' }),
        prompt: 'add a red balloon',
        n: 2,
        response_format: 'b64_json',
      });
      expect(res.data).toHaveLength(2);
      // No size asked: the upstream answers with the size it read from the uploaded PNG.
      for (const d of res.data!) expectPng(Buffer.from(d.b64_json!, 'base64'), 24, 20);
      expect(await gw.services.credit.spendable(id)).toBe(1_000_000 - 2 * perImage);
      const rows = await usageRows(gw, id);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ model, channel, endpoint: 'images.edits', status: 200, input_units: 1, output_units: 2, cost_micros: 2 * perImage });
      expect(uploadsLeft(tmp)).toEqual([]);
    });

    it('edits with a mask and answers URLs that download as PNGs of the requested size', async () => {
      const { key } = await gw.createKey();
      const client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
      const res = await client.images.edit({
        image: await toFile(photo(32, 32), 'room.png', { type: 'image/png' }),
        mask: await toFile(mask(32, 32), 'mask.png', { type: 'image/png' }),
        prompt: 'a cat on the sofa',
        model,
        size: '48x40',
        response_format: 'url',
      });
      expect(res.data).toHaveLength(1);
      const img = await fetch(res.data![0].url!);
      expectPng(Buffer.from(await img.arrayBuffer()), 48, 40);
    });

    it('sends several images (image[]) to the upstream', async () => {
      const { id, key } = await gw.createKey();
      const client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
      const jpeg = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(64, 7)]);
      const res = await client.images.edit({
        model,
        image: [await toFile(photo(16, 16), 'a.png', { type: 'image/png' }), await toFile(jpeg, 'b.jpg', { type: 'image/jpeg' })],
        prompt: 'merge these',
        response_format: 'b64_json',
      });
      expectPng(Buffer.from(res.data![0].b64_json!, 'base64'), 16, 16);
      expect((await usageRows(gw, id))[0]).toMatchObject({ endpoint: 'images.edits', input_units: 2, output_units: 1 });
    });

    it('passes the upstream\'s refusal of a mismatched mask on as a 400 and returns the held credit', async () => {
      const { id, key } = await gw.createKey({ creditMicros: 1_000_000 });
      const client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
      const err = await client.images
        .edit({ model, image: await toFile(photo(20, 20), 'a.png'), mask: await toFile(mask(10, 10), 'm.png'), prompt: 'x' })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OpenAI.BadRequestError);
      expect((err as InstanceType<typeof OpenAI.BadRequestError>).message).toMatch(/same dimensions/);
      expect(await gw.services.credit.spendable(id)).toBe(1_000_000);
      expect(await gw.services.credit.heldCount(id)).toBe(0);
      expect((await usageRows(gw, id)).map((r) => [r.endpoint, r.status, r.output_units, r.cost_micros])).toEqual([['images.edits', 400, 0, 0]]);
      expect(uploadsLeft(tmp)).toEqual([]);
    });
  });

  it('accepts a file streamed by the SDK from disk (chunked multipart, no Content-Length)', async () => {
    const { key } = await gw.createKey();
    const file = join(tmp, 'streamed.png');
    writeFileSync(file, photo(30, 18));
    const client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const res = await client.images.edit({ model: 'sim-image', image: createReadStream(file), prompt: 'from disk', response_format: 'b64_json' });
    expectPng(Buffer.from(res.data![0].b64_json!, 'base64'), 30, 18);
  });

  it('edits on an ark (Seedream) channel by image-to-image generation with the files inlined', async () => {
    const { id, key } = await gw.createKey({ creditMicros: 1_000_000 });
    const client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const res = await client.images.edit({
      model: 'doubao-seedream-4-0-250828',
      image: [await toFile(photo(16, 12), 'a.png'), await toFile(photo(8, 8), 'b.png')],
      prompt: 'a watercolour version',
      size: '36x24',
      response_format: 'b64_json',
    });
    // The simulator decodes every data URL and refuses one that is not the image it declares.
    expectPng(Buffer.from(res.data![0].b64_json!, 'base64'), 36, 24);
    expect(await gw.services.credit.spendable(id)).toBe(1_000_000 - 30_000);
  });

  it('refuses a mask on an ark channel (Seedream has none) and charges nothing', async () => {
    const { id, key } = await gw.createKey({ creditMicros: 1_000_000 });
    const form = new FormData();
    form.set('model', 'doubao-seedream-4-0-250828');
    form.set('prompt', 'x');
    form.set('image', new Blob([photo(8, 8)], { type: 'image/png' }), 'a.png');
    form.set('mask', new Blob([mask(8, 8)], { type: 'image/png' }), 'm.png');
    const res = await fetch(`${gw.url}/v1/images/edits`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: { message: expect.stringMatching(/mask/), type: 'invalid_request_error', code: 'unsupported_parameter', param: 'mask' } });
    expect(await gw.services.credit.spendable(id)).toBe(1_000_000);
    expect(uploadsLeft(tmp)).toEqual([]);
  });
});

describe('POST /v1/images/edits: model rate limit', () => {
  it('counts a multipart edit against the model\'s rpm, read from its `model` field', async () => {
    const sim = await startSimulator({ port: 0 });
    const gw = await imageGateway(sim, {
      models: { 'sim-image': { kind: 'image', owned_by: 'simulator', rpm: 1 }, 'sim-chat': { kind: 'chat' }, 'oa-image': { kind: 'image' }, 'doubao-seedream-4-0-250828': { kind: 'image' } },
    });
    try {
      const { key } = await gw.createKey();
      const send = async () => {
        const form = new FormData();
        form.set('model', 'sim-image');
        form.set('prompt', 'x');
        form.set('image', new Blob([photo(8, 8)], { type: 'image/png' }), 'a.png');
        return fetch(`${gw.url}/v1/images/edits`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
      };
      expect((await send()).status).toBe(200);
      const second = await send();
      expect(second.status).toBe(429);
      expect(Number(second.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(((await second.json()) as any).error.code).toBe('rate_limit_exceeded');
    } finally {
      await gw.close();
      await sim.close();
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/server.js';
import { pngSize } from '../../src/http/image-type.js';
import { claimingPng, photo } from '../helpers/png.js';

// An image edit's output defaults to the first image's size, read from its PNG header: a tiny file
// may claim any size. The simulator refuses a claim beyond what `size` allows (4096 per side), in
// OpenAI's error shape, whatever `size` the request names, before drawing anything.

describe('simulator: image edits refuse what an input image claims beyond the size limit', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ port: 0 });
  });
  afterAll(async () => sim.close());

  async function edit(files: { field: string; data: Buffer; name: string }[], fields: Record<string, string> = {}) {
    const f = new FormData();
    f.append('prompt', 'make it blue');
    f.append('response_format', 'b64_json');
    for (const [k, v] of Object.entries(fields)) f.append(k, v);
    for (const file of files) f.append(file.field, new Blob([file.data], { type: 'image/png' }), file.name);
    const started = performance.now();
    const res = await fetch(`${sim.url}/v1/images/edits`, { method: 'POST', headers: { authorization: 'Bearer sk-sim' }, body: f });
    return { status: res.status, body: (await res.json()) as any, ms: performance.now() - started };
  }

  it.each([
    [6000, 6000],
    [12000, 12000],
    [4097, 16],
    [16, 4097],
    [0, 0],
  ])('refuses a PNG that claims %sx%s, without drawing it', async (w, h) => {
    const lying = claimingPng(w, h);
    expect(lying.length).toBeLessThan(100);
    expect(pngSize(lying)).toEqual({ width: w, height: h });
    for (const fields of [{}, { size: '1024x1024' }] as Record<string, string>[]) {
      const r = await edit([{ field: 'image', data: lying, name: 'big.png' }], fields);
      expect(r.status).toBe(400);
      expect(r.body).toEqual({ error: { message: `Image "big.png" is ${w}x${h}: images must be 1 to 4096 pixels per side.`, type: 'invalid_request_error', param: 'image', code: 'invalid_value' } });
      expect(r.ms).toBeLessThan(1000);
    }
  });

  it('checks every image and the mask, not only the first', async () => {
    const ok = photo(8, 8);
    const second = await edit([
      { field: 'image[]', data: ok, name: 'a.png' },
      { field: 'image[]', data: claimingPng(6000, 6000), name: 'b.png' },
    ]);
    expect(second.status).toBe(400);
    expect(second.body.error).toMatchObject({ param: 'image', message: expect.stringContaining('"b.png" is 6000x6000') });
    const mask = await edit([
      { field: 'image', data: ok, name: 'a.png' },
      { field: 'mask', data: claimingPng(8, 60000), name: 'm.png' },
    ]);
    expect(mask.status).toBe(400);
    expect(mask.body.error).toMatchObject({ param: 'mask', message: expect.stringContaining('"m.png" is 8x60000') });
  });

  it('still edits an image within the limit at its own size', async () => {
    const r = await edit([{ field: 'image', data: photo(24, 16), name: 'ok.png' }]);
    expect(r.status).toBe(200);
    expect(pngSize(Buffer.from(r.body.data[0].b64_json, 'base64'))).toEqual({ width: 24, height: 16 });
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/server.js';
import { sampleVideo } from '../../src/simulator/mp4.js';
import { patternImage } from '../../src/simulator/png.js';
import { eventually, simFault } from '../helpers/video.js';

// The simulator's Veo part, spoken to directly in the Gemini API's wire format.

const MODEL = 'veo-3.1-fast-generate-preview';
const KEY = { 'x-goog-api-key': 'sim-gemini-key', 'content-type': 'application/json' };
const png = () => ({ bytesBase64Encoded: patternImage(8, 8, 1).toString('base64'), mimeType: 'image/png' });

describe('simulator: Veo long-running operations (Gemini API)', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ videoSeconds: 0.3, urlTtlS: 3600 });
  });
  afterAll(async () => sim.close());

  async function create(body: unknown, model = MODEL, headers: Record<string, string> = KEY) {
    const res = await fetch(`${sim.url}/v1beta/models/${model}:predictLongRunning`, { method: 'POST', headers, body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as any };
  }
  async function get(name: string) {
    const res = await fetch(`${sim.url}/v1beta/${name}`, { headers: KEY });
    return { status: res.status, body: (await res.json()) as any };
  }
  const done = (name: string) => eventually(async () => ((await get(name)).body.done ? (await get(name)).body : undefined), 10_000, 'done');

  it('names operations models/{model}/operations/{id}, keeps `done` absent while running, then returns a sample URI', async () => {
    const created = await create({ instances: [{ prompt: 'a corgi' }], parameters: { aspectRatio: '9:16', durationSeconds: 4 } });
    expect(created.status).toBe(200);
    expect(created.body.name).toMatch(new RegExp(`^models/${MODEL}/operations/[a-z0-9]{12}$`));
    const first = await get(created.body.name);
    expect(first.body).toEqual({ name: created.body.name });
    const op = await done(created.body.name);
    expect(op.error).toBeUndefined();
    const uri = op.response.generateVideoResponse.generatedSamples[0].video.uri as string;
    expect(uri).toMatch(/\/v1beta\/files\/[a-z0-9]+:download\?alt=media$/);
  });

  it('downloads the file only with the key, through a redirect to a signed location that honours Range', async () => {
    const { body } = await create({ instances: [{ prompt: 'bytes' }] });
    const op = await done(body.name);
    const uri = op.response.generateVideoResponse.generatedSamples[0].video.uri as string;
    expect((await fetch(uri, { redirect: 'manual' })).status).toBe(403);
    const redirect = await fetch(uri, { headers: { 'x-goog-api-key': 'k' }, redirect: 'manual' });
    expect(redirect.status).toBe(302);
    const location = redirect.headers.get('location')!;
    expect(location).toMatch(/Expires=\d+/);
    const full = await fetch(`${uri}&key=k`);
    expect(full.status).toBe(200);
    expect(Buffer.from(await full.arrayBuffer()).equals(sampleVideo())).toBe(true);
    const part = await fetch(location, { headers: { range: 'bytes=0-99' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 0-99/${sampleVideo().length}`);
    expect((await fetch(location.replace(/Signature=[^&]+/, 'Signature=AAAA'))).status).toBe(403);
  });

  it('takes first frame, first + last frame and reference images only as base64 objects', async () => {
    expect((await create({ instances: [{ prompt: 'x', image: png() }] })).status).toBe(200);
    expect((await create({ instances: [{ prompt: 'x', image: png(), lastFrame: png() }] })).status).toBe(200);
    expect((await create({ instances: [{ prompt: 'x', referenceImages: [{ image: png(), referenceType: 'asset' }] }], parameters: { durationSeconds: 8 } })).status).toBe(200);
    const inline = await create({ instances: [{ prompt: 'x', image: { inlineData: { data: 'AA', mimeType: 'image/png' } } }] });
    expect(inline.status).toBe(400);
    expect(inline.body.error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT', message: expect.stringContaining('inlineData') });
    expect((await create({ instances: [{ prompt: 'x', lastFrame: png() }] })).status).toBe(400);
    expect((await create({ instances: [{ prompt: 'x', image: { bytesBase64Encoded: 'bm90IGFuIGltYWdl', mimeType: 'image/png' } }] })).status).toBe(400);
  });

  it('refuses values the model does not take, naming them', async () => {
    const cases: [unknown, string, RegExp][] = [
      [{ instances: [{ prompt: 'x' }], parameters: { durationSeconds: '8' } }, MODEL, /durationSeconds/],
      [{ instances: [{ prompt: 'x' }], parameters: { durationSeconds: 5 } }, MODEL, /4, 6, 8/],
      [{ instances: [{ prompt: 'x' }], parameters: { resolution: '1080p', durationSeconds: 4 } }, MODEL, /must be 8/],
      [{ instances: [{ prompt: 'x' }], parameters: { resolution: '4k' } }, 'veo-3.1-lite-generate-preview', /720p, 1080p/],
      [{ instances: [{ prompt: 'x' }], parameters: { aspectRatio: '1:1' } }, MODEL, /16:9, 9:16/],
      [{ instances: [{ prompt: 'x' }], parameters: { generateAudio: true } }, MODEL, /generateAudio/],
      [{ instances: [{ prompt: 'x' }], parameters: { seed: 3 } }, MODEL, /seed/],
    ];
    for (const [body, model, message] of cases) {
      const res = await create(body, model);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.message).toMatch(message);
    }
    const unknown = await create({ instances: [{ prompt: 'x' }] }, 'veo-2.0-generate-001');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.status).toBe('NOT_FOUND');
  });

  it('ends operations failed, RAI-filtered, cancelled or expired by prompt marker', async () => {
    const failed = await done((await create({ instances: [{ prompt: 'x [fail]' }] })).body.name);
    expect(failed.error).toMatchObject({ code: 13 });
    const filtered = await done((await create({ instances: [{ prompt: 'x [moderation]' }] })).body.name);
    expect(filtered.error).toBeUndefined();
    expect(filtered.response.generateVideoResponse.generatedSamples).toBeUndefined();
    expect(filtered.response.generateVideoResponse.raiMediaFilteredCount).toBe(1);
    expect(filtered.response.generateVideoResponse.raiMediaFilteredReasons[0]).toMatch(/charged/);
    expect((await done((await create({ instances: [{ prompt: 'x [cancel]' }] })).body.name)).error.code).toBe(1);
    expect((await done((await create({ instances: [{ prompt: 'x [expire]' }] })).body.name)).error.code).toBe(4);
  });

  it('checks the key and injects 429 / 5xx in Google’s error shape', async () => {
    const noKey = await create({ instances: [{ prompt: 'x' }] }, MODEL, { 'content-type': 'application/json' });
    expect(noKey.status).toBe(403);
    expect(noKey.body.error.status).toBe('PERMISSION_DENIED');
    const viaQuery = await fetch(`${sim.url}/v1beta/models/${MODEL}:predictLongRunning?key=k`, { method: 'POST', body: JSON.stringify({ instances: [{ prompt: 'q' }] }) });
    expect(viaQuery.status).toBe(200);
    await simFault(sim.url, { match: 'veo.video.create', kind: 'status', status: 429 });
    const limited = await create({ instances: [{ prompt: 'x' }] });
    expect(limited.status).toBe(429);
    expect(limited.body.error).toMatchObject({ code: 429, status: 'RESOURCE_EXHAUSTED' });
    await simFault(sim.url, { match: 'veo.video.get', kind: 'status', status: 503 });
    const { body } = await create({ instances: [{ prompt: 'y' }] });
    expect((await get(body.name)).body.error.status).toBe('UNAVAILABLE');
    expect((await get(body.name.replace(/[a-z0-9]{12}$/, 'zzzzzzzzzzzz'))).status).toBe(404);
  });
});

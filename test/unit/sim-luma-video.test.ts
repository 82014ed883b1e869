import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/server.js';
import { sampleVideo } from '../../src/simulator/mp4.js';
import { eventually } from '../helpers/video.js';
import { simCall } from '../helpers/sim-call.js';

// The simulator's Luma part, spoken to directly in Luma Dream Machine's wire format.

const AUTH = { authorization: 'Bearer luma-sim', 'content-type': 'application/json' };

describe('simulator: Luma Dream Machine', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ videoSeconds: 0.3, urlTtlS: 3600 });
  });
  afterAll(async () => sim.close());

  const call = simCall(() => sim.url, () => AUTH);

  it('runs a keyframed generation queued → dreaming → completed, with a CDN link that serves byte ranges', async () => {
    const created = await call('POST', '/dream-machine/v1/generations/video', { model: 'ray-flash-2', prompt: 'a bird', duration: '9s', resolution: '1080p', aspect_ratio: '9:16', keyframes: { frame0: { type: 'image', url: 'https://example.com/a.png' }, frame1: { type: 'image', url: 'https://example.com/b.png' } } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), state: 'queued', generation_type: 'video', request: { duration: '9s', resolution: '1080p', aspect_ratio: '9:16' } });
    const done = await eventually(async () => {
      const g = await call('GET', `/dream-machine/v1/generations/${created.body.id}`);
      return g.body.state === 'completed' ? g.body : undefined;
    }, 10_000, 'completed');
    const part = await fetch(done.assets.video, { headers: { range: 'bytes=0-9' } });
    expect(part.status).toBe(206);
    expect(Buffer.from(await part.arrayBuffer()).equals(sampleVideo().subarray(0, 10))).toBe(true);
  });

  it("refuses what Luma refuses, as {detail}: lengths, resolutions, ratios, base64 keyframes, a revoked key", async () => {
    const bad = async (body: unknown, message: RegExp, status = 400, headers = AUTH) => {
      const r = await call('POST', '/dream-machine/v1/generations/video', body, headers);
      expect(r.status, JSON.stringify(r.body)).toBe(status);
      expect(r.body).toEqual({ detail: expect.stringMatching(message) });
    };
    await bad({ model: 'ray-2', prompt: 'x', duration: '10s' }, /duration: must be one of 5s, 9s/);
    await bad({ model: 'ray-2', prompt: 'x', resolution: '8k' }, /resolution: must be one of 540p, 720p, 1080p, 4k/);
    await bad({ model: 'ray-2', prompt: 'x', aspect_ratio: '2:1' }, /aspect_ratio/);
    await bad({ model: 'ray-2', keyframes: { frame0: { type: 'image', url: 'data:image/png;base64,AAAA' } } }, /frame0: url must be an image URL/);
    await bad({ model: 'ray-2', prompt: 'x' }, /^Invalid API key$/, 401, { ...AUTH, authorization: 'Bearer luma-revoked' });
  });
});

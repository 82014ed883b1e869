import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/server.js';
import { sampleVideo } from '../../src/simulator/mp4.js';
import { eventually } from '../helpers/video.js';
import { simCall } from '../helpers/sim-call.js';

// The simulator's Vidu part, spoken to directly in Vidu's wire format.

const AUTH = { authorization: 'Token vda-sim', 'content-type': 'application/json' };

describe('simulator: Vidu video generation', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ videoSeconds: 0.3, urlTtlS: 3600 });
  });
  afterAll(async () => sim.close());

  const call = simCall(() => sim.url, () => AUTH);
  const until = (id: string, state: string) =>
    eventually(async () => {
      const t = await call('GET', `/ent/v2/tasks/${id}/creations`);
      return t.body.state === state ? t.body : undefined;
    }, 10_000, state);

  it('runs a start-end task to success with a signed 24 h link that serves byte ranges', async () => {
    const created = await call('POST', '/ent/v2/start-end2video', { model: 'viduq2-turbo', images: ['https://example.com/a.png', 'https://example.com/b.png'], prompt: 'a bird', duration: 8, resolution: '1080p' });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ task_id: expect.stringMatching(/^[1-9][0-9]{15}$/), state: 'created', model: 'viduq2-turbo', duration: 8, resolution: '1080p' });
    const done = await until(created.body.task_id, 'success');
    expect(done).toMatchObject({ id: created.body.task_id, err_code: '', credits: 32 });
    const url = done.creations[0].url as string;
    expect(url).toMatch(/[?&]Expires=\d+/);
    const part = await fetch(url, { headers: { range: 'bytes=0-9' } });
    expect(part.status).toBe(206);
    expect(Buffer.from(await part.arrayBuffer()).equals(sampleVideo().subarray(0, 10))).toBe(true);
  });

  it("refuses what Vidu refuses, in Vidu's error shape: the wrong endpoint for a model, lengths, counts, a ratio from an image", async () => {
    const bad = async (path: string, body: unknown, reason: string, message: RegExp) => {
      const r = await call('POST', path, body);
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      expect(r.body).toMatchObject({ code: 400, reason, message: expect.stringMatching(message), metadata: { trace_id: expect.stringMatching(/^[0-9a-f]{32}$/) } });
    };
    await bad('/ent/v2/text2video', { model: 'viduq2-pro', prompt: 'x' }, 'FieldInvalid', /text2video takes viduq2, viduq1/);
    await bad('/ent/v2/start-end2video', { model: 'viduq2-pro', images: ['https://e.com/a.png', 'https://e.com/b.png'], duration: 10 }, 'FieldInvalid', /duration .*1, 2, 3, 4, 5, 6, 7, 8\)/);
    await bad('/ent/v2/img2video', { model: 'vidu2.0', images: ['https://e.com/a.png'], duration: 8, resolution: '1080p' }, 'FieldInvalid', /resolution/);
    await bad('/ent/v2/reference2video', { model: 'vidu2.0', prompt: 'x', images: Array(4).fill('https://e.com/a.png') }, 'FieldItemCountOutOfRange', /images \(1–3\)/);
    await bad('/ent/v2/img2video', { model: 'viduq1', images: ['https://e.com/a.png'], aspect_ratio: '16:9' }, 'FieldUnwanted', /aspect_ratio/);
    await bad('/ent/v2/text2video', { model: 'viduq1', prompt: 'x', aspect_ratio: '4:3' }, 'FieldInvalid', /aspect_ratio .*16:9, 9:16, 1:1/);
  });

  it('answers a missing, malformed or revoked key with 401 Unauthorized', async () => {
    for (const authorization of [undefined, 'Bearer vda-sim', 'Token vda-revoked-key']) {
      const r = await call('POST', '/ent/v2/text2video', { model: 'viduq2', prompt: 'x' }, { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) });
      expect(r.status).toBe(401);
      expect(r.body).toMatchObject({ code: 401, reason: 'Unauthorized', message: 'unauthorized' });
    }
  });

  it('cancels a task while it waits (then failed / UserCancelled), and refuses once it runs', async () => {
    sim.state.options.videoSeconds = 5;
    try {
      const a = await call('POST', '/ent/v2/text2video', { model: 'viduq2', prompt: 'a corgi' });
      expect((await call('POST', `/ent/v2/tasks/${a.body.task_id}/cancel`, { id: a.body.task_id })).body).toEqual({});
      expect((await call('GET', `/ent/v2/tasks/${a.body.task_id}/creations`)).body).toMatchObject({ state: 'failed', err_code: 'UserCancelled', creations: [] });
      const b = await call('POST', '/ent/v2/text2video', { model: 'viduq2', prompt: 'a corgi' });
      await until(b.body.task_id, 'processing');
      const late = await call('POST', `/ent/v2/tasks/${b.body.task_id}/cancel`, { id: b.body.task_id });
      expect(late.status).toBe(400);
      expect(late.body).toMatchObject({ reason: 'BadRequest', message: 'task state is scheduled, can not cancel' });
    } finally {
      sim.state.options.videoSeconds = 0.3;
    }
  });
});

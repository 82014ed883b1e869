import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/server.js';
import { sampleVideo } from '../../src/simulator/mp4.js';
import { eventually } from '../helpers/video.js';
import { simCall } from '../helpers/sim-call.js';

// The simulator's Runway part, spoken to directly in Runway's wire format.

const AUTH = { authorization: 'Bearer key_sim', 'x-runway-version': '2024-11-06', 'content-type': 'application/json' };

describe('simulator: Runway video generation', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ videoSeconds: 0.3, urlTtlS: 3600 });
  });
  afterAll(async () => sim.close());

  const call = simCall(() => sim.url, () => AUTH);
  const until = (id: string, status: string) =>
    eventually(async () => {
      const t = await call('GET', `/v1/tasks/${id}`);
      return t.body?.status === status ? t.body : undefined;
    }, 10_000, status);

  it('runs a first + last frame task to SUCCEEDED with a signed output link that serves byte ranges', async () => {
    const created = await call('POST', '/v1/image_to_video', { model: 'veo3.1', promptText: 'a bird', ratio: '1920:1080', duration: 4, promptImage: [{ uri: 'https://example.com/a.png', position: 'first' }, { uri: 'https://example.com/b.png', position: 'last' }] });
    expect(created.status).toBe(200);
    expect(created.body).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    const done = await until(created.body.id, 'SUCCEEDED');
    expect(done.createdAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    const part = await fetch(done.output[0], { headers: { range: 'bytes=0-9' } });
    expect(part.status).toBe(206);
    expect(Buffer.from(await part.arrayBuffer()).equals(sampleVideo().subarray(0, 10))).toBe(true);
  });

  it("refuses what Runway refuses, as {error}: a text model's ratios, a missing duration, a last frame on gen4, http URLs", async () => {
    const bad = async (path: string, body: unknown, message: RegExp) => {
      const r = await call('POST', path, body);
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      expect(r.body).toEqual({ error: expect.stringMatching(message) });
    };
    await bad('/v1/text_to_video', { model: 'gen4.5', promptText: 'x', ratio: '960:960', duration: 5 }, /ratio: .*'1280:720' \| '720:1280'/);
    await bad('/v1/text_to_video', { model: 'gen4.5', promptText: 'x', ratio: '1280:720' }, /duration: Required/);
    await bad('/v1/text_to_video', { model: 'gen4_turbo', promptText: 'x', ratio: '1280:720' }, /model: Invalid enum value/);
    await bad('/v1/image_to_video', { model: 'gen4_turbo', ratio: '1280:720', promptImage: [{ uri: 'https://e.com/a.png', position: 'first' }, { uri: 'https://e.com/b.png', position: 'last' }] }, /"last" is not supported by gen4_turbo/);
    await bad('/v1/image_to_video', { model: 'gen4_turbo', ratio: '1280:720', promptImage: 'http://e.com/a.png' }, /Only HTTPS URLs/);
  });

  it('answers a missing or revoked key with 401 and a missing version header with 400', async () => {
    const body = { model: 'gen4.5', promptText: 'x', ratio: '1280:720', duration: 5 };
    expect(await call('POST', '/v1/text_to_video', body, { ...AUTH, authorization: 'Bearer key_revoked' })).toEqual({ status: 401, body: { error: 'Incorrect or missing API key.' } });
    const { 'x-runway-version': _, ...noVersion } = AUTH;
    expect(await call('POST', '/v1/text_to_video', body, noVersion)).toEqual({ status: 400, body: { error: 'The X-Runway-Version header is required.' } });
  });

  it('DELETE cancels an open task (CANCELLED) and deletes a finished one (404 after)', async () => {
    const body = { model: 'gen4.5', promptText: 'a corgi', ratio: '1280:720', duration: 5 };
    const a = await call('POST', '/v1/text_to_video', body);
    expect((await call('DELETE', `/v1/tasks/${a.body.id}`)).status).toBe(204);
    expect((await call('GET', `/v1/tasks/${a.body.id}`)).body).toMatchObject({ id: a.body.id, status: 'CANCELLED' });
    const b = await call('POST', '/v1/text_to_video', body);
    await until(b.body.id, 'SUCCEEDED');
    expect((await call('DELETE', `/v1/tasks/${b.body.id}`)).status).toBe(204);
    expect(await call('GET', `/v1/tasks/${b.body.id}`)).toEqual({ status: 404, body: { error: 'Task not found.' } });
  });
});

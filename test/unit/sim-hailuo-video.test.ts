import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/server.js';
import { sampleVideo } from '../../src/simulator/mp4.js';
import { eventually, simFault } from '../helpers/video.js';
import { simCall } from '../helpers/sim-call.js';

// The simulator's MiniMax Hailuo part, spoken to directly in MiniMax's wire format.

const AUTH = { authorization: 'Bearer mm-sim', 'content-type': 'application/json' };

describe('simulator: MiniMax video generation', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ videoSeconds: 0.3, urlTtlS: 3600 });
  });
  afterAll(async () => sim.close());

  const call = simCall(() => sim.url, () => AUTH);
  const query = (id: string) => call('GET', `/v1/query/video_generation?task_id=${id}`);
  const until = (id: string, status: string) =>
    eventually(async () => {
      const t = await query(id);
      return t.body.status === status ? t.body : undefined;
    }, 10_000, status);

  it('moves Preparing/Queueing → Processing → Success and resolves file_id to a download_url', async () => {
    sim.state.options.videoSeconds = 1;
    let created;
    try {
      created = await call('POST', '/v1/video_generation', { model: 'MiniMax-Hailuo-02', prompt: 'a corgi', duration: 10, resolution: '768P' });
      expect(created.status).toBe(200);
      expect(created.body).toEqual({ task_id: expect.stringMatching(/^[1-9][0-9]{14}$/), base_resp: { status_code: 0, status_msg: 'success' } });
      expect(['Preparing', 'Queueing']).toContain((await query(created.body.task_id)).body.status);
      await until(created.body.task_id, 'Processing');
    } finally {
      sim.state.options.videoSeconds = 0.3;
    }
    const done = await until(created.body.task_id, 'Success');
    expect(done).toMatchObject({ video_width: 1366, video_height: 768, base_resp: { status_code: 0 } });
    expect(done.file_id).toMatch(/^[0-9]+$/);
    const file = await call('GET', `/v1/files/retrieve?file_id=${done.file_id}`);
    expect(file.body.file).toMatchObject({ file_id: Number(done.file_id), bytes: sampleVideo().length, purpose: 'video_generation', filename: 'output_aigc.mp4' });
    const url = file.body.file.download_url as string;
    expect(url).toMatch(/[?&]Expires=\d+/);
    const part = await fetch(url, { headers: { range: 'bytes=0-9' } });
    expect(part.status).toBe(206);
    expect(Buffer.from(await part.arrayBuffer()).equals(sampleVideo().subarray(0, 10))).toBe(true);
  });

  it('answers errors in base_resp with HTTP 200, naming allowed values', async () => {
    const cases: [unknown, RegExp][] = [
      [{ model: 'MiniMax-Hailuo-02', prompt: 'x', duration: 8 }, /6, 10/],
      [{ model: 'MiniMax-Hailuo-2.3', prompt: 'x', resolution: '512P' }, /768P, 1080P/],
      [{ model: 'MiniMax-Hailuo-02', prompt: 'x', duration: 10, resolution: '1080P' }, /1080P supports 6 s/],
      [{ model: 'MiniMax-Hailuo-2.3-Fast', prompt: 'x' }, /first_frame_image is required/],
      [{ model: 'T2V-01', prompt: 'x', first_frame_image: 'https://e/a.png' }, /does not support first_frame/],
      [{ model: 'MiniMax-Hailuo-2.3', prompt: 'x', first_frame_image: 'https://e/a.png', last_frame_image: 'https://e/b.png' }, /first_last_frame/],
      [{ model: 'Hailuo-9', prompt: 'x' }, /model must be one of/],
    ];
    for (const [body, message] of cases) {
      const res = await call('POST', '/v1/video_generation', body);
      expect(res.status, JSON.stringify(body)).toBe(200);
      expect(res.body.base_resp.status_code).toBe(2013);
      expect(res.body.base_resp.status_msg).toMatch(message);
      expect(res.body.task_id).toBeUndefined();
    }
    const noKey = await call('POST', '/v1/video_generation', { model: 'T2V-01', prompt: 'x' }, {});
    expect(noKey.status).toBe(200);
    expect(noKey.body.base_resp.status_code).toBe(1004);
  });

  it('fails tasks by marker (1027 for moderation) and has no file for them', async () => {
    const moderated = await call('POST', '/v1/video_generation', { model: 'T2V-01', prompt: 'x [moderation]' });
    const m = await until(moderated.body.task_id, 'Fail');
    expect(m.base_resp).toEqual({ status_code: 1027, status_msg: 'output video sensitive' });
    expect(m.file_id).toBe('');
    const failed = await call('POST', '/v1/video_generation', { model: 'I2V-01', prompt: 'x [fail]', first_frame_image: 'data:image/png;base64,AAAA' });
    expect((await until(failed.body.task_id, 'Fail')).base_resp.status_code).toBe(1000);
  });

  it('injects 429 / 5xx with base_resp codes', async () => {
    await simFault(sim.url, { match: 'minimax.video.get', kind: 'status', status: 429 });
    const limited = await query('1');
    expect(limited.status).toBe(429);
    expect(limited.body.base_resp.status_code).toBe(1002);
    await simFault(sim.url, { match: 'minimax.video.retrieve', kind: 'status', status: 502 });
    const broken = await call('GET', '/v1/files/retrieve?file_id=1');
    expect(broken.status).toBe(502);
    expect(broken.body.base_resp.status_code).toBe(1013);
  });
});

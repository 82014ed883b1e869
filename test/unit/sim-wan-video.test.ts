import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/server.js';
import { sampleVideo } from '../../src/simulator/mp4.js';
import { eventually, simFault } from '../helpers/video.js';
import { simCall } from '../helpers/sim-call.js';

// The simulator's Alibaba Wan part, spoken to directly in DashScope's wire format.

const SYNTH = '/api/v1/services/aigc/video-generation/video-synthesis';
const KF2V = '/api/v1/services/aigc/image2video/video-synthesis';
const ASYNC = { authorization: 'Bearer sk-sim', 'content-type': 'application/json', 'x-dashscope-async': 'enable' };

describe('simulator: DashScope video synthesis tasks', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ videoSeconds: 0.3, urlTtlS: 3600 });
  });
  afterAll(async () => sim.close());

  const call = simCall(() => sim.url, () => ASYNC);
  const until = (id: string, status: string) =>
    eventually(async () => {
      const t = await call('GET', `/api/v1/tasks/${id}`);
      return t.body.output?.task_status === status ? t.body : undefined;
    }, 10_000, status);

  it('refuses a create without X-DashScope-Async: enable', async () => {
    const res = await call('POST', SYNTH, { model: 'wan2.5-t2v-preview', input: { prompt: 'x' } }, { authorization: 'Bearer sk-sim', 'content-type': 'application/json' });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: 'AccessDenied', message: expect.stringContaining('synchronous') });
  });

  it('moves PENDING → RUNNING → SUCCEEDED with a signed video_url and usage', async () => {
    const created = await call('POST', SYNTH, { model: 'wan2.5-t2v-preview', input: { prompt: 'a corgi' }, parameters: { size: '1280*720', duration: 10, seed: 7, prompt_extend: false } });
    expect(created.status).toBe(200);
    expect(created.body.output).toEqual({ task_id: expect.stringMatching(/^[0-9a-f-]{36}$/), task_status: 'PENDING' });
    const done = await until(created.body.output.task_id, 'SUCCEEDED');
    expect(done.usage).toEqual({ video_duration: 10, video_count: 1, SR: 720 });
    expect(done.output.video_url).toMatch(/[?&]Expires=\d+&OSSAccessKeyId=[^&]+&Signature=/);
    expect(done.output.submit_time).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}$/);
    const file = await fetch(done.output.video_url, { headers: { range: 'bytes=-16' } });
    expect(file.status).toBe(206);
    expect(Buffer.from(await file.arrayBuffer()).equals(sampleVideo().subarray(-16))).toBe(true);
  });

  it('serves image-to-video and first + last frame on their own endpoints', async () => {
    const i2v = await call('POST', SYNTH, { model: 'wan2.2-i2v-flash', input: { prompt: 'p', img_url: 'https://e/a.png' }, parameters: { resolution: '480P' } });
    expect(i2v.status).toBe(200);
    expect((await until(i2v.body.output.task_id, 'SUCCEEDED')).usage.SR).toBe(480);
    const kf = await call('POST', KF2V, { model: 'wan2.2-kf2v-flash', input: { first_frame_url: 'https://e/a.png', last_frame_url: 'https://e/b.png' }, parameters: { resolution: '720P' } });
    expect(kf.status).toBe(200);
    expect((await call('POST', SYNTH, { model: 'wan2.2-kf2v-flash', input: { first_frame_url: 'https://e/a.png' } })).status).toBe(400);
  });

  it('refuses values the model does not take, naming the allowed ones', async () => {
    const cases: [string, unknown, RegExp][] = [
      [SYNTH, { model: 'wan2.5-t2v-preview', input: { prompt: 'x' }, parameters: { duration: 7 } }, /5, 10/],
      [SYNTH, { model: 'wan2.6-t2v', input: { prompt: 'x' }, parameters: { size: '832*480' } }, /1280\*720/],
      [SYNTH, { model: 'wan2.2-i2v-plus', input: { prompt: 'x', img_url: 'https://e/a.png' }, parameters: { resolution: '720P' } }, /480P, 1080P/],
      [SYNTH, { model: 'wan2.2-i2v-plus', input: { prompt: 'x' } }, /img_url/],
      [SYNTH, { model: 'wan9-t2v', input: { prompt: 'x' } }, /Model not exist/],
    ];
    for (const [path, body, message] of cases) {
      const res = await call('POST', path, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.message).toMatch(message);
      expect(typeof res.body.request_id).toBe('string');
    }
  });

  it('ends tasks FAILED (incl. DataInspectionFailed), CANCELED or UNKNOWN by marker; cancels PENDING ones only', async () => {
    const failed = await call('POST', SYNTH, { model: 'wan2.5-t2v-preview', input: { prompt: 'x [moderation]' } });
    expect((await until(failed.body.output.task_id, 'FAILED')).output).toMatchObject({ code: 'DataInspectionFailed' });
    const gone = await call('POST', SYNTH, { model: 'wan2.5-t2v-preview', input: { prompt: 'x [expire]' } });
    await until(gone.body.output.task_id, 'UNKNOWN');
    expect((await call('GET', '/api/v1/tasks/00000000-0000-4000-8000-000000000000')).body.output.task_status).toBe('UNKNOWN');
    sim.state.options.videoSeconds = 5;
    try {
      const queued = await call('POST', SYNTH, { model: 'wan2.5-t2v-preview', input: { prompt: 'stop me' } });
      expect((await call('POST', `/api/v1/tasks/${queued.body.output.task_id}/cancel`)).status).toBe(200);
      expect((await call('GET', `/api/v1/tasks/${queued.body.output.task_id}`)).body.output.task_status).toBe('CANCELED');
      const again = await call('POST', `/api/v1/tasks/${queued.body.output.task_id}/cancel`);
      expect(again.status).toBe(400);
      expect(again.body.code).toBe('UnsupportedOperation');
    } finally {
      sim.state.options.videoSeconds = 0.3;
    }
  });

  it('refuses an expired or forged video_url and injects 429 / 5xx in DashScope’s shape', async () => {
    sim.state.options.urlTtlS = 1;
    try {
      const { body } = await call('POST', SYNTH, { model: 'wan2.5-t2v-preview', input: { prompt: 'short-lived' } });
      const done = await until(body.output.task_id, 'SUCCEEDED');
      expect((await fetch(done.output.video_url.replace(/Signature=[^&]+/, 'Signature=x'))).status).toBe(403);
      await eventually(async () => (await fetch(done.output.video_url)).status === 403, 5_000, 'expiry');
    } finally {
      sim.state.options.urlTtlS = 3600;
    }
    await simFault(sim.url, { match: 'dashscope.video.create', kind: 'status', status: 429 });
    const limited = await call('POST', SYNTH, { model: 'wan2.5-t2v-preview', input: { prompt: 'x' } });
    expect(limited.status).toBe(429);
    expect(limited.body.code).toMatch(/^Throttling/);
    const noKey = await call('GET', '/api/v1/tasks/x', undefined, {});
    expect(noKey.status).toBe(401);
    expect(noKey.body.code).toBe('InvalidApiKey');
  });
});

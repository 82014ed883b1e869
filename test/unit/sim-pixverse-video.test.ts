import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/server.js';
import { sampleVideo } from '../../src/simulator/mp4.js';
import { patternImage } from '../../src/simulator/png.js';
import { eventually } from '../helpers/video.js';
import { simCall } from '../helpers/sim-call.js';

// The simulator's Pixverse part, spoken to directly in Pixverse's wire format.

const headers = (trace = randomUUID()) => ({ 'api-key': 'pv-sim', 'ai-trace-id': trace, 'content-type': 'application/json' });

describe('simulator: Pixverse video generation', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ videoSeconds: 0.3, urlTtlS: 3600 });
  });
  afterAll(async () => sim.close());

  const call = simCall(() => sim.url, headers);
  async function upload(bytes: Buffer): Promise<any> {
    const form = new FormData();
    form.append('image', new Blob([bytes], { type: 'image/png' }), 'frame.png');
    const { 'content-type': _, ...h } = headers();
    return (await fetch(`${sim.url}/openapi/v2/image/upload`, { method: 'POST', headers: h, body: form })).json();
  }

  it('uploads frames, runs a transition on their ids to status 1 and serves the video with byte ranges', async () => {
    const a = await upload(patternImage(16, 16, 1));
    const b = await upload(patternImage(16, 16, 2));
    expect(a).toMatchObject({ ErrCode: 0, Resp: { img_id: expect.any(Number) } });
    const created = await call('POST', '/openapi/v2/video/transition/generate', { model: 'v5', prompt: 'morph', first_frame_img: a.Resp.img_id, last_frame_img: b.Resp.img_id, duration: 5, quality: '720p' });
    expect(created.body).toEqual({ ErrCode: 0, ErrMsg: 'Success', Resp: { video_id: expect.any(Number) } });
    const done = await eventually(async () => {
      const r = await call('GET', `/openapi/v2/video/result/${created.body.Resp.video_id}`);
      return r.body.Resp?.status === 1 ? r.body.Resp : undefined;
    }, 10_000, 'status 1');
    expect(done).toMatchObject({ id: created.body.Resp.video_id, outputWidth: 1280, outputHeight: 720 });
    const part = await fetch(done.url, { headers: { range: 'bytes=0-9' } });
    expect(part.status).toBe(206);
    expect(Buffer.from(await part.arrayBuffer()).equals(sampleVideo().subarray(0, 10))).toBe(true);
  });

  it('answers a create repeated with the same trace id with the same video, and a new trace id with a new one', async () => {
    const body = { model: 'v4.5', prompt: 'a corgi', duration: 5, quality: '540p' };
    const trace = randomUUID();
    const first = await call('POST', '/openapi/v2/video/text/generate', body, headers(trace));
    expect((await call('POST', '/openapi/v2/video/text/generate', body, headers(trace))).body.Resp.video_id).toBe(first.body.Resp.video_id);
    expect((await call('POST', '/openapi/v2/video/text/generate', body)).body.Resp.video_id).not.toBe(first.body.Resp.video_id);
  });

  it('refuses what Pixverse refuses in ErrCode / ErrMsg: 8 s at 1080p, an image id never uploaded, a ratio from an image, a missing trace id, a revoked key', async () => {
    expect((await call('POST', '/openapi/v2/video/text/generate', { model: 'v5', prompt: 'x', duration: 8, quality: '1080p' })).body).toEqual({ ErrCode: 400017, ErrMsg: "Invalid parameter: 1080p doesn't support 8" });
    expect((await call('POST', '/openapi/v2/video/img/generate', { model: 'v5', prompt: 'x', img_id: 1, duration: 5, quality: '540p' })).body.ErrMsg).toMatch(/img_id is not an uploaded image/);
    const img = await upload(patternImage(8, 8, 3));
    expect((await call('POST', '/openapi/v2/video/img/generate', { model: 'v5', img_id: img.Resp.img_id, duration: 5, quality: '540p', aspect_ratio: '16:9' })).body.ErrMsg).toMatch(/aspect_ratio applies to text-to-video only/);
    const { 'ai-trace-id': _, ...noTrace } = headers();
    expect((await call('POST', '/openapi/v2/video/text/generate', { model: 'v5', prompt: 'x' }, noTrace)).body).toEqual({ ErrCode: 400017, ErrMsg: 'Ai-trace-id is required' });
    expect(await call('POST', '/openapi/v2/video/text/generate', { model: 'v5', prompt: 'x' }, { ...headers(), 'api-key': 'pv-revoked' })).toEqual({ status: 401, body: { ErrCode: 10005, ErrMsg: 'API key error' } });
  });
});

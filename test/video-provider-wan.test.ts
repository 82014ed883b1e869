import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WAN_DEFAULT_MODELS } from '../src/providers/dashscope/models.js';
import { balanceOf, createAndFinish, expectUrlServes, expectRefused, providerRig, type ProviderRig } from './helpers/provider-video.js';
import { IMG, createTask, waitForTask } from './helpers/video.js';

// Alibaba Wan through a `dashscope` channel, end to end against the simulator's DashScope part
// (which refuses a create without X-DashScope-Async: enable).

describe('video provider: Wan (dashscope channel)', () => {
  let rig: ProviderRig;
  beforeAll(async () => {
    rig = await providerRig('dashscope', WAN_DEFAULT_MODELS);
  });
  afterAll(async () => rig.close());

  it('runs text-to-video to SUCCESS under DashScope’s task id, serves the video and settles the reported seconds and resolution', async () => {
    const { id, key } = await rig.gw.createKey({ creditMicros: 10_000_000 });
    const done = await createAndFinish(rig.gw, key, { model: 'wan2.5-t2v-preview', prompt: 'a corgi', duration: 10, resolution: '720p', ratio: '9:16', seed: 42 });
    expect(done.status).toBe('SUCCESS');
    expect(done.task_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(done.data).toMatchObject({ output: { task_id: done.task_id, task_status: 'SUCCEEDED' }, usage: { video_duration: 10, SR: 720 } });
    expect(done.fail_reason).toBe(done.data.output.video_url);
    expect(done.fail_reason).toMatch(/Expires=\d+/);
    await expectUrlServes(done.fail_reason);
    // 10 s × $0.10 at 720p.
    expect(await balanceOf(rig.gw, id)).toBe(10_000_000 - 1_000_000);
  });

  it('sends first frames to the i2v model and first + last frames to the kf2v endpoint', async () => {
    const { key } = await rig.gw.createKey();
    expect((await createAndFinish(rig.gw, key, { model: 'wan2.5-i2v-preview', prompt: 'wave', image: IMG(1), resolution: '480p' })).status).toBe('SUCCESS');
    const kf = await createAndFinish(rig.gw, key, { model: 'wan2.2-kf2v-flash', images: [{ url: IMG(1), role: 'first_frame' }, { url: IMG(2), role: 'last_frame' }] });
    expect(kf.status).toBe('SUCCESS');
    expect(kf.data.usage.SR).toBe(720);
  });

  it('refunds a moderation failure with DataInspectionFailed in fail_reason', async () => {
    const { id, key } = await rig.gw.createKey({ creditMicros: 10_000_000 });
    const created = await createTask(rig.gw.url, key, { model: 'wan2.5-t2v-preview', prompt: 'x [moderation]' });
    const done = await waitForTask(rig.gw.url, key, created.body.data.task_id, (r) => r.status === 'FAILURE');
    expect(done.fail_reason).toMatch(/^DataInspectionFailed: /);
    await expect.poll(() => balanceOf(rig.gw, id)).toBe(10_000_000);
  });

  it('ends a task DashScope cancelled or forgot as a refunded FAILURE', async () => {
    const { id, key } = await rig.gw.createKey({ creditMicros: 10_000_000 });
    for (const [marker, reason] of [['[cancel]', /^cancelled/], ['[expire]', /^task_unknown: /]] as const) {
      const created = await createTask(rig.gw.url, key, { model: 'wan2.5-t2v-preview', prompt: `x ${marker}` });
      const done = await waitForTask(rig.gw.url, key, created.body.data.task_id, (r) => r.status === 'FAILURE');
      expect(done.fail_reason).toMatch(reason);
    }
    await expect.poll(() => balanceOf(rig.gw, id)).toBe(10_000_000);
  });

  it('refuses values Wan does not take, naming the allowed ones', async () => {
    const { key } = await rig.gw.createKey();
    await expectRefused(rig.gw, key, { model: 'wan2.5-t2v-preview', prompt: 'x', duration: 7 }, ['5', '10']);
    await expectRefused(rig.gw, key, { model: 'wan2.5-t2v-preview', prompt: 'x', resolution: '480p', ratio: '4:3' }, ['16:9', '9:16', '1:1']);
    await expectRefused(rig.gw, key, { model: 'wan2.5-t2v-preview', prompt: 'x', resolution: '4k' }, ['480p', '720p', '1080p']);
    await expectRefused(rig.gw, key, { model: 'wan2.5-i2v-preview', image: IMG(1), ratio: '16:9' }, ['ratio']);
    await expectRefused(rig.gw, key, { model: 'wan2.5-t2v-preview', prompt: 'x', generate_audio: true }, ['generate_audio', 'resolution, ratio, duration, seed, watermark']);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KLING_DEFAULT_MODELS } from '../src/providers/kling/models.js';
import { KLING_SIMULATOR_ACCOUNT } from '../src/providers/kling/wire.js';
import { klingToken } from '../src/providers/kling/api.js';
import { balanceOf, createAndFinish, expectUrlServes, expectRefused, providerRig, type ProviderRig } from './helpers/provider-video.js';
import { IMG, createTask, waitForTask } from './helpers/video.js';

// Kling through a `kling` channel, end to end against the simulator's Kling part, which verifies
// the per-request JWT (HS256, iss = access key, nbf/exp) signed with the channel's api_secret.

describe('video provider: Kling (kling channel)', () => {
  let rig: ProviderRig;
  beforeAll(async () => {
    rig = await providerRig('kling', KLING_DEFAULT_MODELS, { api_key: KLING_SIMULATOR_ACCOUNT.apiKey, api_secret: KLING_SIMULATOR_ACCOUNT.apiSecret });
  });
  afterAll(async () => rig.close());

  it('signs a JWT the provider accepts, runs to SUCCESS, serves the video and settles the reported seconds at the mode’s rate', async () => {
    const { id, key } = await rig.gw.createKey({ creditMicros: 10_000_000 });
    const done = await createAndFinish(rig.gw, key, { model: 'kling-v2-6', prompt: 'a corgi', duration: 10, resolution: '720p', ratio: '1:1' });
    expect(done.status).toBe('SUCCESS');
    // Kling reads a task under the path it was created at, so the upstream id holds '/': a minted id.
    expect(done.task_id).toMatch(/^task_[A-Za-z0-9]{32}$/);
    expect(done.data).toMatchObject({ task_status: 'succeed', task_result: { videos: [{ duration: '10.042' }] } });
    expect(done.fail_reason).toBe(done.data.task_result.videos[0].url);
    await expectUrlServes(done.fail_reason);
    // 10 s (10.042 reported) × $0.056 (std = 720p).
    expect(await balanceOf(rig.gw, id)).toBe(10_000_000 - 560_000);
    expect(rig.gw.logs.join('\n')).not.toContain(KLING_SIMULATOR_ACCOUNT.apiSecret);
  });

  it('maps first frame and first + last frame to image2video with image_tail', async () => {
    const { key } = await rig.gw.createKey();
    const first = await createAndFinish(rig.gw, key, { model: 'kling-v1-6', image: IMG(1), resolution: '1080p' });
    expect(first.status).toBe('SUCCESS');
    const both = await createAndFinish(rig.gw, key, { model: 'kling-v2-6', prompt: 'morph', images: [{ url: IMG(1), role: 'first_frame' }, { url: IMG(2), role: 'last_frame' }] });
    expect(both.status).toBe('SUCCESS');
  });

  it('refunds a failed task with Kling’s message in fail_reason', async () => {
    const { id, key } = await rig.gw.createKey({ creditMicros: 10_000_000 });
    const created = await createTask(rig.gw.url, key, { model: 'kling-v2-6', prompt: 'x [moderation]' });
    const done = await waitForTask(rig.gw.url, key, created.body.data.task_id, (r) => r.status === 'FAILURE');
    expect(done.fail_reason).toMatch(/^task_failed: .*risk control/);
    expect(done.data.task_status).toBe('failed');
    await expect.poll(() => balanceOf(rig.gw, id)).toBe(10_000_000);
  });

  it('refuses values Kling does not take, naming the allowed ones', async () => {
    const { key } = await rig.gw.createKey();
    await expectRefused(rig.gw, key, { model: 'kling-v2-6', prompt: 'x', duration: 7 }, ['5', '10']);
    await expectRefused(rig.gw, key, { model: 'kling-v2-6', prompt: 'x', ratio: '4:3' }, ['16:9', '9:16', '1:1']);
    await expectRefused(rig.gw, key, { model: 'kling-v2-6', prompt: 'x', resolution: '480p' }, ['720p', '1080p']);
    await expectRefused(rig.gw, key, { model: 'kling-v2-6', image: IMG(1), ratio: '16:9' }, ['ratio']);
    await expectRefused(rig.gw, key, { model: 'kling-v2-6', prompt: 'x', seed: 1 }, ['seed']);
  });

  it('a wrong secret key is refused by Kling as bad credentials and never shown to the client or written to the logs', async () => {
    const wrong = await providerRig('kling', KLING_DEFAULT_MODELS, { api_key: KLING_SIMULATOR_ACCOUNT.apiKey, api_secret: 'wrong-secret-value-789' });
    try {
      const { key } = await wrong.gw.createKey();
      const res = await createTask(wrong.gw.url, key, { model: 'kling-v2-6', prompt: 'x' });
      expect(res.status).toBeGreaterThanOrEqual(500);
      expect(res.body.data).toBeNull();
      expect(JSON.stringify(res.body)).not.toContain('wrong-secret-value-789');
      expect(wrong.gw.logs.join('\n')).not.toContain('wrong-secret-value-789');
      expect(res.body.message).toMatch(/rejected the gateway's credentials/);
    } finally {
      await wrong.close();
    }
  });

  it('signs tokens valid from 5 s ago for 30 minutes', () => {
    const [header, claims] = klingToken('ak', 'sk', 1_000_000).split('.').slice(0, 2).map((p) => JSON.parse(Buffer.from(p, 'base64url').toString()));
    expect(header).toEqual({ alg: 'HS256', typ: 'JWT' });
    expect(claims).toEqual({ iss: 'ak', exp: 1_001_800, nbf: 999_995 });
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HAILUO_DEFAULT_MODELS } from '../src/providers/minimax/models.js';
import { balanceOf, createAndFinish, expectAdapterDownloads, expectRefused, providerRig, type ProviderRig } from './helpers/provider-video.js';
import { IMG, createTask, waitForTask } from './helpers/video.js';

// MiniMax Hailuo through a `minimax` channel, end to end against the simulator's MiniMax part:
// errors in base_resp, the result a file_id the key resolves through /v1/files/retrieve.

describe('video provider: Hailuo (minimax channel)', () => {
  let rig: ProviderRig;
  beforeAll(async () => {
    rig = await providerRig('minimax', HAILUO_DEFAULT_MODELS, { api_key: 'minimax-secret-key-456' });
  });
  afterAll(async () => rig.close());

  it('runs text-to-video to SUCCESS, resolves the file with the key and settles the requested seconds', async () => {
    const { id, key } = await rig.gw.createKey({ creditMicros: 10_000_000 });
    const done = await createAndFinish(rig.gw, key, { model: 'MiniMax-Hailuo-02', prompt: 'a corgi', duration: 10, resolution: '768p' });
    expect(done.status).toBe('SUCCESS');
    expect(done.task_id).toMatch(/^[0-9]{15}$/);
    expect(done.data).toMatchObject({ task_id: done.task_id, status: 'Success', file_id: expect.stringMatching(/^[0-9]+$/), video_height: 768 });
    await expectAdapterDownloads(rig, done, 'MiniMax-Hailuo-02');
    expect(JSON.stringify(done)).not.toContain('minimax-secret-key-456');
    // 10 s × $0.045 at 768p (MiniMax reports no length: the requested one settles).
    expect(await balanceOf(rig.gw, id)).toBe(10_000_000 - 450_000);
  });

  it('maps first frame, first + last frame and a subject reference', async () => {
    const { key } = await rig.gw.createKey();
    expect((await createAndFinish(rig.gw, key, { model: 'MiniMax-Hailuo-2.3-Fast', prompt: 'wave', image: IMG(1) })).status).toBe('SUCCESS');
    const both = { model: 'MiniMax-Hailuo-02', prompt: 'morph', resolution: '512p', images: [{ url: IMG(1), role: 'first_frame' }, { url: IMG(2), role: 'last_frame' }] };
    expect((await createAndFinish(rig.gw, key, both)).data.video_height).toBe(512);
    expect((await createAndFinish(rig.gw, key, { model: 'S2V-01', prompt: 'she smiles', images: [{ url: IMG(3), role: 'reference_image' }] })).status).toBe('SUCCESS');
  });

  it('refunds a failed task with MiniMax’s code in fail_reason', async () => {
    const { id, key } = await rig.gw.createKey({ creditMicros: 10_000_000 });
    const created = await createTask(rig.gw.url, key, { model: 'MiniMax-Hailuo-02', prompt: 'x [moderation]' });
    const done = await waitForTask(rig.gw.url, key, created.body.data.task_id, (r) => r.status === 'FAILURE');
    expect(done.fail_reason).toBe('content_filtered_1027: output video sensitive');
    await expect.poll(() => balanceOf(rig.gw, id)).toBe(10_000_000);
  });

  it('refuses values Hailuo does not take, naming the allowed ones', async () => {
    const { key } = await rig.gw.createKey();
    await expectRefused(rig.gw, key, { model: 'MiniMax-Hailuo-02', prompt: 'x', duration: 8 }, ['6', '10']);
    await expectRefused(rig.gw, key, { model: 'MiniMax-Hailuo-02', prompt: 'x', resolution: '1080p', duration: 10 }, ['6']);
    await expectRefused(rig.gw, key, { model: 'MiniMax-Hailuo-02', prompt: 'x', resolution: '512p' }, ['768p', '1080p']);
    await expectRefused(rig.gw, key, { model: 'MiniMax-Hailuo-2.3', prompt: 'x', ratio: '16:9' }, ['ratio', 'resolution, duration']);
  });
});

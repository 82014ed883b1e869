import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { patternImage } from '../src/simulator/png.js';
import { VEO_DEFAULT_MODELS } from '../src/providers/gemini/models.js';
import { balanceOf, createAndFinish, expectAdapterDownloads, expectRefused, providerRig, type ProviderRig } from './helpers/provider-video.js';
import { createTask, waitForTask } from './helpers/video.js';

// Veo through a `gemini` channel, end to end against the simulator's Gemini API part: operation
// names become gateway-minted task ids, images reach Veo as base64 (a client's URL only when its
// host is public), the video comes through /content with the channel's key, a RAI-filtered result
// is a refunded FAILURE.

describe('video provider: Veo (gemini channel)', () => {
  let rig: ProviderRig;
  let images: Server;
  let imageBase = '';
  beforeAll(async () => {
    rig = await providerRig('gemini', VEO_DEFAULT_MODELS, { api_key: 'gemini-secret-key-123' });
    images = createServer((req, res) => {
      if (req.url === '/frame.png') {
        const png = patternImage(16, 16, 3);
        res.writeHead(200, { 'content-type': 'image/png', 'content-length': png.length });
        return void res.end(png);
      }
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => images.listen(0, '127.0.0.1', () => r()));
    imageBase = `http://127.0.0.1:${(images.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await rig.close();
    await new Promise((r) => images.close(r));
  });

  it('runs text-to-video to SUCCESS under a minted id, serves the video and settles seconds × rate', async () => {
    const { id, key } = await rig.gw.createKey({ creditMicros: 10_000_000 });
    const done = await createAndFinish(rig.gw, key, { model: 'veo-3.1-fast-generate-preview', prompt: 'a corgi', duration: 4, resolution: '720p', ratio: '9:16' });
    expect(done.status).toBe('SUCCESS');
    expect(done.task_id).toMatch(/^task_[A-Za-z0-9]{32}$/);
    expect(done.data).toMatchObject({ done: true, name: expect.stringMatching(/^models\/veo-3\.1-fast-generate-preview\/operations\//) });
    expect(JSON.stringify(done)).not.toContain('gemini-secret-key-123');
    await expectAdapterDownloads(rig, done, 'veo-3.1-fast-generate-preview');
    // 4 s × $0.12 at 720p.
    expect(await balanceOf(rig.gw, id)).toBe(10_000_000 - 480_000);
  });

  it('sends images inline (first frame, first + last, reference images); a loopback URL is refused on any channel', async () => {
    const { key } = await rig.gw.createKey();
    const img = `data:image/png;base64,${patternImage(16, 16, 3).toString('base64')}`;
    for (const images of [[img], [{ url: img, role: 'first_frame' }, { url: img, role: 'last_frame' }], [{ url: img, role: 'reference_image' }]]) {
      const done = await createAndFinish(rig.gw, key, { model: 'veo-3.1-generate-preview', prompt: 'move', images, ...(images.length === 1 && typeof images[0] !== 'string' ? { duration: 8 } : {}) });
      expect(done.status, JSON.stringify(images)).toBe('SUCCESS');
    }
    // The channel allows private networks for what Veo hands back, never for a client's URL
    // (test/video-client-image-url-guard.test.ts fetches a URL end to end on a simulator channel).
    const local = await createTask(rig.gw.url, key, { model: 'veo-3.1-generate-preview', prompt: 'x', images: [`${imageBase}/frame.png`] });
    expect(local.status).toBe(400);
    expect(local.body.message).toMatch(/images\[0\].*not, or does not resolve to, a public address/);
  });

  it('refunds a RAI-filtered result and names the filter in fail_reason', async () => {
    const { id, key } = await rig.gw.createKey({ creditMicros: 10_000_000 });
    const created = await createTask(rig.gw.url, key, { model: 'veo-3.1-generate-preview', prompt: 'x [moderation]', duration: 8 });
    const done = await waitForTask(rig.gw.url, key, created.body.data.task_id, (r) => r.status === 'FAILURE');
    expect(done.fail_reason).toMatch(/^content_filtered: .*charged/);
    await expect.poll(() => balanceOf(rig.gw, id)).toBe(10_000_000);
  });

  it('refuses values Veo does not take, naming the allowed ones', async () => {
    const { key } = await rig.gw.createKey();
    await expectRefused(rig.gw, key, { model: 'veo-3.1-generate-preview', prompt: 'x', duration: 5 }, ['4', '6', '8']);
    await expectRefused(rig.gw, key, { model: 'veo-3.1-lite-generate-preview', prompt: 'x', resolution: '4k' }, ['720p', '1080p']);
    await expectRefused(rig.gw, key, { model: 'veo-3.1-generate-preview', prompt: 'x', ratio: '1:1' }, ['16:9', '9:16']);
    await expectRefused(rig.gw, key, { model: 'veo-3.1-generate-preview', prompt: 'x', resolution: '1080p', duration: 4 }, ['8']);
    await expectRefused(rig.gw, key, { model: 'veo-3.1-generate-preview', prompt: 'x', seed: 3 }, ['seed', 'resolution, ratio, duration']);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from './helpers/gateway.js';
import { createTask, eventually, isFinished, readTask, waitForTask } from './helpers/video.js';

// The video URL is signed and expires; a read after expiry gets a fresh one from the provider.

function expectMp4(bytes: Buffer): void {
  expect(bytes.length).toBeGreaterThan(1000);
  expect(bytes.subarray(4, 8).toString('latin1')).toBe('ftyp');
  const text = bytes.toString('latin1');
  expect(text).toContain('moov');
  expect(text).toContain('mdat');
  expect(text).toContain('avc1');
}

describe('signed video URLs', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway({ simulator: { embedded: true, video_seconds: 0.3, url_ttl_s: 2 } });
  });
  afterAll(async () => gw.close());

  it('serves the video as an MP4 and refuses it once the URL expired; a read then refreshes the URL', async () => {
    const { key } = await gw.createKey();
    const created = await createTask(gw.url, key, { model: 'sim-video', prompt: 'refresh me' });
    const done = await waitForTask(gw.url, key, created.body.data.task_id, isFinished);
    expect(done.status).toBe('SUCCESS');
    const first: string = done.fail_reason;
    const url = new URL(first);
    expect(url.searchParams.get('X-Tos-Expires')).toBe('2');

    // The first read may itself have refreshed a URL close to expiry; whichever is current works.
    const res = await fetch(first);
    if (res.status === 200) {
      expect(res.headers.get('content-type')).toBe('video/mp4');
      expectMp4(Buffer.from(await res.arrayBuffer()));
    } else {
      expect(res.status).toBe(403);
    }

    await eventually(async () => (await fetch(first)).status === 403, 10_000, 'the URL to expire');

    const again = (await readTask(gw.url, key, done.task_id)).body.data;
    expect(again.status).toBe('SUCCESS');
    expect(again.fail_reason).not.toBe(first);
    expect(again.data.content.video_url).toBe(again.fail_reason);
    expect(again.task_id).toBe(again.data.id);
    const fresh = await fetch(again.fail_reason);
    expect(fresh.status).toBe(200);
    expectMp4(Buffer.from(await fresh.arrayBuffer()));
    // The refreshed URL is stored: the next read answers it without another provider call.
    const stored = await gw.services.tasks.repo.get(done.task_id);
    expect(stored!.fail_reason).toBe(again.fail_reason);
    expect(stored!.url_expires_at).toBeGreaterThan(Date.now() - 5000);
  });

  it('refuses a URL whose signature was tampered with', async () => {
    const { key } = await gw.createKey();
    const created = await createTask(gw.url, key, { model: 'sim-video', prompt: 'tamper' });
    const done = await waitForTask(gw.url, key, created.body.data.task_id, isFinished);
    const url = new URL(done.fail_reason);
    url.searchParams.set('X-Tos-Expires', '86400');
    expect((await fetch(url)).status).toBe(403);
  });

  it('answers byte ranges, as players request them', async () => {
    const { key } = await gw.createKey();
    const created = await createTask(gw.url, key, { model: 'sim-video', prompt: 'ranges' });
    const done = await waitForTask(gw.url, key, created.body.data.task_id, isFinished);
    const current = (await readTask(gw.url, key, done.task_id)).body.data.fail_reason;
    const res = await fetch(current, { headers: { range: 'bytes=0-7' } });
    expect(res.status).toBe(206);
    expect(res.headers.get('content-range')).toMatch(/^bytes 0-7\/\d+$/);
    expect(Buffer.from(await res.arrayBuffer()).subarray(4, 8).toString('latin1')).toBe('ftyp');
  });
});

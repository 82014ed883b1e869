import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI, { toFile } from 'openai';
import { startGateway, tempDir, usageRowsOf, type TestGateway } from './helpers/gateway.js';
import { readTask, simVideoConfig, untilDone } from './helpers/video.js';
import { encodePng } from '../src/simulator/png.js';

// The OpenAI Videos API (/v1/videos) driven by the official openai SDK, unmodified but for its base
// URL and key, against the embedded simulator's Seedance part (sim-video): create (JSON and a form
// with an uploaded first frame), retrieve until completed, list pages, download, delete; errors as
// the SDK's typed errors. A video is a task: the same id reads at /v1/video/generations/{id}.

const CREDIT = 50_000_000;


describe('the Videos API through the openai SDK (embedded simulator)', () => {
  let gw: TestGateway;
  let dir: { path: string; remove(): void };
  let client: OpenAI;
  let key: string;
  const sdk = (k: string) => new OpenAI({ apiKey: k, baseURL: `${gw.url}/v1`, maxRetries: 0 });

  beforeAll(async () => {
    dir = tempDir();
    gw = await startGateway({ storage: { type: 'local', dir: dir.path, tick_ms: 20 } });
    ({ key } = await gw.createKey({ creditMicros: CREDIT }));
    client = sdk(key);
  });
  afterAll(async () => {
    await gw.close();
    dir.remove();
  });

  it('creates from a form with an uploaded first frame, runs to completed, downloads the MP4 and reads the same id natively', async () => {
    const created = await client.videos.create({
      model: 'sim-video',
      prompt: 'a corgi on a skateboard',
      seconds: '8' as any,
      size: '1280x720',
      input_reference: await toFile(encodePng(8, 8, new Uint8Array(8 * 8 * 3).fill(200)), 'frame.png', { type: 'image/png' }),
    });
    expect(created).toMatchObject({ object: 'video', model: 'sim-video', status: 'queued', progress: 0, prompt: 'a corgi on a skateboard', seconds: '8', size: '1280x720', error: null, completed_at: null });
    expect(created.created_at).toBeGreaterThan(1_700_000_000);
    const done = await untilDone(client, created.id);
    expect(done).toMatchObject({ id: created.id, status: 'completed', progress: 100, seconds: '8', size: '1280x720', error: null });
    expect(done.completed_at).toBeGreaterThanOrEqual(done.created_at);

    const res = await client.videos.downloadContent(created.id);
    expect(res.headers.get('content-type')).toBe('video/mp4');
    const mp4 = Buffer.from(await res.arrayBuffer());
    expect(mp4.subarray(4, 8).toString('latin1')).toBe('ftyp');

    // One task underneath: the native API reads it by the same id, as a first-frame task with 8 s at 720p 16:9.
    const native = await readTask(gw.url, key, created.id);
    expect(native.status).toBe(200);
    expect(native.body.data).toMatchObject({ task_id: created.id, status: 'SUCCESS', action: 'generate' });
    const row = await gw.services.tasks.repo.get(created.id);
    expect(row!.data).toBeTruthy();
  });

  it('creates from JSON (curl) with input_reference.image_url and maps seconds and size to the provider’s values', async () => {
    const res = await fetch(`${gw.url}/v1/videos`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sim-video', prompt: 'waves', seconds: '4', size: '720x1280', input_reference: { image_url: 'https://example.com/frames/1.png' }, metadata: { camera_fixed: true } }),
    });
    const v = (await res.json()) as any;
    expect(res.status, JSON.stringify(v)).toBe(200);
    expect(v).toMatchObject({ object: 'video', seconds: '4', size: '720x1280' });
    const sim = gw.services.simulator!;
    const row = await gw.services.tasks.repo.get(v.id);
    const stats = (await (await fetch(`${sim.url}/__sim/video/stats`)).json()) as any;
    expect(stats.tasks[row!.upstream_id]).toBeTruthy();
    // The provider got Seedance's own terms: duration 4, 720p, 9:16.
    expect(JSON.parse(row!.video_meta)).toEqual({ prompt: 'waves', seconds: '4', size: '720x1280' });
    await untilDone(client, v.id);
  });

  it('lists the key’s videos as cursor pages, newest first or oldest first', async () => {
    const k = await gw.createKey({ creditMicros: CREDIT });
    const c = sdk(k.key);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await c.videos.create({ model: 'sim-video', prompt: `clip ${i}` })).id);
    // Newest first by creation second, ties by id (both descending); pages never repeat or skip.
    const expected = [...ids].sort().reverse();
    const first = await c.videos.list({ limit: 2 });
    expect(first.data.map((v) => v.id)).toEqual(expected.slice(0, 2));
    expect(first).toMatchObject({ has_more: true, last_id: expected[1] });
    const raw = (await (await fetch(`${gw.url}/v1/videos?limit=2`, { headers: { authorization: `Bearer ${k.key}` } })).json()) as any;
    expect(raw).toMatchObject({ object: 'list', first_id: expected[0], last_id: expected[1], has_more: true });
    const second = await first.getNextPage();
    expect(second.data.map((v) => v.id)).toEqual(expected.slice(2));
    expect(second.has_more).toBe(false);
    const all: string[] = [];
    for await (const v of c.videos.list({ limit: 1, order: 'asc' })) all.push(v.id);
    expect(all).toEqual([...expected].reverse());
    // Another key's videos never appear.
    expect((await client.videos.list({ limit: 100 })).data.map((v) => v.id)).not.toContain(ids[0]);
  });

  it('deletes a finished video: gone from both APIs and from the archive', async () => {
    const v = await client.videos.create({ model: 'sim-video', prompt: 'to delete' });
    await untilDone(client, v.id);
    await expect.poll(() => existsSync(join(dir.path, `${v.id}.mp4`))).toBe(true);
    const deleted = await client.videos.delete(v.id);
    expect(deleted).toEqual({ id: v.id, object: 'video.deleted', deleted: true });
    expect(existsSync(join(dir.path, `${v.id}.mp4`))).toBe(false);
    await expect(client.videos.retrieve(v.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(client.videos.downloadContent(v.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(client.videos.delete(v.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    expect((await readTask(gw.url, key, v.id)).status).toBe(404);
    expect((await client.videos.list({ limit: 100 })).data.map((x) => x.id)).not.toContain(v.id);
    const native = (await (await fetch(`${gw.url}/v1/video/generations?limit=100`, { headers: { authorization: `Bearer ${key}` } })).json()) as any;
    expect(native.data.tasks.map((t: any) => t.task_id)).not.toContain(v.id);
  });

  it('deletes a queued video by cancelling it at the provider: the hold is released, one ledger row for the create', async () => {
    const k = await gw.createKey({ creditMicros: CREDIT });
    const c = sdk(k.key);
    await simVideoConfig(gw.services.simulator!.url, { video_seconds: 30 });
    try {
      const v = await c.videos.create({ model: 'sim-video', prompt: 'queued then deleted' });
      expect(await gw.services.reservations.balance(k.id)).toBeLessThan(CREDIT);
      expect(await c.videos.delete(v.id)).toMatchObject({ deleted: true });
      expect(await gw.services.reservations.balance(k.id)).toBe(CREDIT);
      await expect(c.videos.retrieve(v.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
      const rows = await usageRowsOf(gw.services, k.id);
      expect(rows.filter((r) => r.endpoint === 'video')).toHaveLength(1);
      expect(rows.filter((r) => r.endpoint === 'video.settle')).toHaveLength(1);
    } finally {
      await simVideoConfig(gw.services.simulator!.url, { video_seconds: 0.3 });
    }
  });

  it('refuses to delete a running video its provider cannot cancel: 409 ConflictError, nothing changes', async () => {
    const v = await client.videos.create({ model: 'sim-video', prompt: 'runs forever [stuck]' });
    await expect.poll(async () => (await client.videos.retrieve(v.id)).status).toBe('in_progress');
    const err = await client.videos.delete(v.id).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.ConflictError);
    expect((err as any).error).toMatchObject({ code: 'video_not_deletable', type: 'invalid_request_error' });
    expect((await client.videos.retrieve(v.id)).status).toBe('in_progress');
  });

  it('answers mistakes in OpenAI’s error shape, as the SDK’s typed errors', async () => {
    const bad = await client.videos.create({ model: 'sim-video', prompt: 'x', seconds: '20' as any }).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(OpenAI.BadRequestError);
    expect((bad as any).error).toMatchObject({ param: 'seconds', type: 'invalid_request_error' });
    expect((bad as any).message).toContain('"2", "3"');
    expect((bad as any).message).toContain('"12"');

    const size = await client.videos.create({ model: 'sim-video', prompt: 'x', size: '1024x1792' }).catch((e: unknown) => e);
    expect(size).toBeInstanceOf(OpenAI.BadRequestError);
    expect((size as any).error.param).toBe('size');
    expect((size as any).message).toContain('"1280x720"');

    const unknownModel = await client.videos.create({ model: 'sora-2', prompt: 'x' }).catch((e: unknown) => e);
    expect(unknownModel).toBeInstanceOf(OpenAI.NotFoundError);

    const other = await gw.createKey();
    const mine = await client.videos.create({ model: 'sim-video', prompt: 'mine' });
    await expect(sdk(other.key).videos.retrieve(mine.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(sdk(other.key).videos.delete(mine.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(sdk(other.key).videos.downloadContent(mine.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);

    const remix = await client.videos.remix(mine.id, { prompt: 'again' }).catch((e: unknown) => e);
    expect(remix).toBeInstanceOf(OpenAI.BadRequestError);
    expect((remix as any).error.code).toBe('unsupported');
    expect((remix as any).message).toContain('remix');
    for (const call of [() => client.videos.edit({ prompt: 'x', video: { id: mine.id } }), () => client.videos.extend({ prompt: 'x', seconds: '4', video: { id: mine.id } }), () => client.videos.getCharacter('c1')]) {
      const e = await call().catch((x: unknown) => x);
      expect(e).toBeInstanceOf(OpenAI.BadRequestError);
      expect((e as any).error.code).toBe('unsupported');
    }

    await untilDone(client, mine.id);
    const thumb = await client.videos.downloadContent(mine.id, { variant: 'thumbnail' }).catch((e: unknown) => e);
    expect(thumb).toBeInstanceOf(OpenAI.NotFoundError);
    expect((thumb as any).message).toContain('cover image');
  });

  it('a key over its rate limit gets RateLimitError with Retry-After', async () => {
    const k = await gw.createKey({ rpm: 1, creditMicros: CREDIT });
    const c = sdk(k.key);
    await c.videos.create({ model: 'sim-video', prompt: 'one' });
    const err = await c.videos.create({ model: 'sim-video', prompt: 'two' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect(Number((err as any).headers.get('retry-after'))).toBeGreaterThan(0);
  });
});

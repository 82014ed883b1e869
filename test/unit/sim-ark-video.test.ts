import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startSimulator, type Simulator } from '../../src/simulator/server.js';
import { sampleVideo } from '../../src/simulator/mp4.js';
import { tempDir } from '../helpers/gateway.js';
import { eventually, simFault, simVideoStats } from '../helpers/video.js';

// The simulator's Ark video part, spoken to directly in Ark's wire format.

const TASKS = '/api/v3/contents/generations/tasks';
const auth = { authorization: 'Bearer sim-key', 'content-type': 'application/json' };

/** Top-level boxes of an ISO BMFF file: [type, size]. */
function boxes(buf: Buffer): [string, number][] {
  const out: [string, number][] = [];
  for (let at = 0; at + 8 <= buf.length; ) {
    const size = buf.readUInt32BE(at);
    out.push([buf.subarray(at + 4, at + 8).toString('latin1'), size]);
    if (size < 8) break;
    at += size;
  }
  return out;
}

function hasFfprobe(): boolean {
  try {
    execFileSync('ffprobe', ['-version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe('simulator: Ark content generation tasks', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ videoSeconds: 0.3, urlTtlS: 3600 });
  });
  afterAll(async () => sim.close());

  async function create(body: unknown) {
    const res = await fetch(`${sim.url}${TASKS}`, { method: 'POST', headers: auth, body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as any };
  }
  async function get(id: string) {
    const res = await fetch(`${sim.url}${TASKS}/${id}`, { headers: auth });
    return { status: res.status, body: (await res.json()) as any };
  }
  async function until(id: string, status: string) {
    return eventually(async () => {
      const t = await get(id);
      return t.body.status === status ? t.body : undefined;
    }, 10_000, status);
  }

  it('creates Ark-shaped task ids and moves queued → running → succeeded with every ProviderTask field', async () => {
    const created = await create({
      model: 'doubao-seedance-1-0-pro-250528',
      content: [{ type: 'text', text: 'a corgi' }, { type: 'image_url', image_url: { url: 'https://example.com/a.png' }, role: 'first_frame' }],
      resolution: '720p',
      ratio: '16:9',
      duration: 5,
      seed: 11,
    });
    expect(created.status).toBe(200);
    expect(Object.keys(created.body)).toEqual(['id']);
    expect(created.body.id).toMatch(/^cgt-\d{14}-[0-9a-z]{5}$/);
    const first = await get(created.body.id);
    expect(['queued', 'running']).toContain(first.body.status);
    const done = await until(created.body.id, 'succeeded');
    expect(done).toMatchObject({
      id: created.body.id,
      model: 'doubao-seedance-1-0-pro-250528',
      status: 'succeeded',
      error: null,
      seed: 11,
      draft: false,
      ratio: '16:9',
      resolution: '720p',
      duration: 5,
      framespersecond: 24,
      generate_audio: false,
      service_tier: 'default',
      execution_expires_after: 172800,
      // 1248 × 704 × 24 × 5 / 1024
      usage: { completion_tokens: 102960, total_tokens: 102960 },
    });
    expect(Number.isInteger(done.created_at)).toBe(true);
    expect(done.updated_at).toBeGreaterThanOrEqual(done.created_at);
    expect(done.content.video_url).toMatch(/[?&]X-Tos-Date=\d{8}T\d{6}Z/);
    expect(done.content.video_url).toMatch(/[?&]X-Tos-Expires=3600/);
    expect(done.content.video_url).toMatch(/[?&]X-Tos-Signature=[0-9a-f]{64}/);
  });

  it('serves a playable MP4 (ftyp, moov, mdat; H.264) at the signed URL', async () => {
    const { body } = await create({ model: 'sim-video', content: [{ type: 'text', text: 'bars' }] });
    const done = await until(body.id, 'succeeded');
    const res = await fetch(done.content.video_url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('video/mp4');
    const mp4 = Buffer.from(await res.arrayBuffer());
    expect(boxes(mp4).map(([t]) => t)).toEqual(['ftyp', 'moov', 'mdat']);
    expect(boxes(mp4).reduce((n, [, size]) => n + size, 0)).toBe(mp4.length);
    expect(mp4.equals(sampleVideo())).toBe(true);
    if (hasFfprobe()) {
      const dir = tempDir();
      try {
        const file = join(dir.path, 'v.mp4');
        writeFileSync(file, mp4);
        const probe = JSON.parse(execFileSync('ffprobe', ['-v', 'error', '-show_streams', '-count_frames', '-of', 'json', file]).toString()) as any;
        expect(probe.streams[0]).toMatchObject({ codec_name: 'h264', width: 64, height: 64, nb_read_frames: '12' });
        // Decoding every frame reports no error.
        expect(execFileSync('ffmpeg', ['-v', 'error', '-i', file, '-f', 'null', '-'], { stdio: ['ignore', 'pipe', 'pipe'] }).toString()).toBe('');
      } finally {
        dir.remove();
      }
    }
  });

  it('ends tasks failed, cancelled or expired by prompt marker', async () => {
    const failed = await create({ model: 'sim-video', content: [{ type: 'text', text: 'x [fail]' }] });
    expect(await until(failed.body.id, 'failed')).toMatchObject({
      error: { code: 'OutputVideoSensitiveContentDetected', message: expect.stringContaining('sensitive') },
    });
    const cancelled = await create({ model: 'sim-video', content: [{ type: 'text', text: 'x [cancel]' }] });
    expect((await until(cancelled.body.id, 'cancelled')).content).toBeUndefined();
    const expired = await create({ model: 'sim-video', content: [{ type: 'text', text: 'x [expire]' }] });
    expect((await until(expired.body.id, 'expired')).usage).toBeUndefined();
    const quick = await create({ model: 'sim-video', content: [{ type: 'text', text: 'short' }], execution_expires_after: 1 });
    expect((await until(quick.body.id, 'succeeded')).status).toBe('succeeded');
  });

  it('cancels a queued task on DELETE, deletes a finished one, and refuses a running one', async () => {
    sim.state.options.videoSeconds = 5;
    try {
      const { body } = await create({ model: 'sim-video', content: [{ type: 'text', text: 'cancel me' }] });
      expect((await fetch(`${sim.url}${TASKS}/${body.id}`, { method: 'DELETE', headers: auth })).status).toBe(200);
      expect((await get(body.id)).body.status).toBe('cancelled');
      expect((await fetch(`${sim.url}${TASKS}/${body.id}`, { method: 'DELETE', headers: auth })).status).toBe(200);
      const gone = await get(body.id);
      expect(gone.status).toBe(404);
      expect(gone.body.error).toMatchObject({ code: 'ResourceNotFound' });
      const running = await create({ model: 'sim-video', content: [{ type: 'text', text: 'busy [stuck]' }] });
      await until(running.body.id, 'running');
      const refused = await fetch(`${sim.url}${TASKS}/${running.body.id}`, { method: 'DELETE', headers: auth });
      expect(refused.status).toBe(400);
    } finally {
      sim.state.options.videoSeconds = 0.3;
    }
  });

  it('rejects bad bodies in Ark’s error shape', async () => {
    const cases: unknown[] = [
      { content: [{ type: 'text', text: 'x' }] },
      { model: 'sim-video', content: [] },
      { model: 'sim-video', content: [{ type: 'image_url', image_url: { url: 'https://e/a.png' }, role: 'first_frame' }, { type: 'image_url', image_url: { url: 'https://e/b.png' }, role: 'reference_image' }] },
      { model: 'sim-video', content: [{ type: 'text', text: 'x' }], resolution: '4k' },
      { model: 'sim-video', content: [{ type: 'text', text: 'x' }], duration: 'long' },
    ];
    for (const body of cases) {
      const res = await create(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(Object.keys(res.body.error).sort()).toEqual(['code', 'message', 'param', 'type']);
      expect(res.body.error.message).toMatch(/Request id: /);
    }
    const noKey = await fetch(`${sim.url}${TASKS}`, { method: 'POST', body: '{}' });
    expect(noKey.status).toBe(401);
  });

  it('injects 429 and 5xx in Ark’s error shape and counts polls per task', async () => {
    const { body } = await create({ model: 'sim-video', content: [{ type: 'text', text: 'faults' }] });
    await simFault(sim.url, { match: 'ark.video.get', kind: 'status', status: 429, count: 1 });
    const limited = await fetch(`${sim.url}${TASKS}/${body.id}`, { headers: auth });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('1');
    expect(((await limited.json()) as any).error.code).toMatch(/^RateLimitExceeded/);
    await simFault(sim.url, { match: 'ark.video.get', kind: 'status', status: 500, count: 1 });
    const broken = await fetch(`${sim.url}${TASKS}/${body.id}`, { headers: auth });
    expect(broken.status).toBe(500);
    expect(((await broken.json()) as any).error.code).toBe('InternalServiceError');
    const before = (await simVideoStats(sim.url)).tasks[body.id].polls;
    await get(body.id);
    await get(body.id);
    expect((await simVideoStats(sim.url)).tasks[body.id].polls).toBe(before + 2);
  });

  it('lists tasks with filters', async () => {
    const { body } = await create({ model: 'doubao-seedance-1-0-lite-t2v-250428', content: [{ type: 'text', text: 'listed' }] });
    const res = await fetch(`${sim.url}${TASKS}?page_num=1&page_size=50&filter.model=doubao-seedance-1-0-lite-t2v-250428`, { headers: auth });
    const list = (await res.json()) as any;
    expect(list.total).toBeGreaterThanOrEqual(1);
    expect(list.items.map((t: any) => t.id)).toContain(body.id);
    expect(list.items.every((t: any) => t.model === 'doubao-seedance-1-0-lite-t2v-250428')).toBe(true);
  });

  it('lists tasks by id (filter.task_ids repeated): only those, newest first, each counted as a read', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await create({ model: 'doubao-seedance-1-0-pro-250528', content: [{ type: 'text', text: `by id ${i} [stuck]` }] })).body.id);
    const before = await simVideoStats(sim.url);
    const q = new URLSearchParams({ page_num: '1', page_size: '10' });
    for (const id of [ids[0], ids[2], 'cgt-20250101000000-nope0', ids[0]]) q.append('filter.task_ids', id);
    const list = (await (await fetch(`${sim.url}${TASKS}?${q}`, { headers: auth })).json()) as any;
    expect(list.total).toBe(2);
    expect(list.items.map((t: any) => t.id)).toEqual([ids[2], ids[0]]);
    expect(list.items[0]).toMatchObject({ id: ids[2], model: 'doubao-seedance-1-0-pro-250528', error: null });
    expect(['queued', 'running']).toContain(list.items[0].status);
    const after = await simVideoStats(sim.url);
    expect(after.tasks[ids[0]].polls).toBe(before.tasks[ids[0]].polls + 1);
    expect(after.tasks[ids[1]].polls).toBe(before.tasks[ids[1]].polls);
    expect(after.tasks[ids[2]].polls).toBe(before.tasks[ids[2]].polls + 1);
    expect((after as any).task_reads).toBe((before as any).task_reads + 2);
    // page_size cuts the answer; total still counts every match.
    const one = new URLSearchParams({ page_num: '2', page_size: '1' });
    for (const id of ids) one.append('filter.task_ids', id);
    const page2 = (await (await fetch(`${sim.url}${TASKS}?${one}`, { headers: auth })).json()) as any;
    expect(page2.total).toBe(3);
    expect(page2.items.map((t: any) => t.id)).toEqual([ids[1]]);
  });

  it('refuses an expired download URL with 403', async () => {
    sim.state.options.urlTtlS = 1;
    try {
      const { body } = await create({ model: 'sim-video', content: [{ type: 'text', text: 'short-lived' }] });
      const done = await until(body.id, 'succeeded');
      await eventually(async () => (await fetch(done.content.video_url)).status === 403, 10_000, 'expiry');
      const fresh = await get(body.id);
      expect((await fetch(fresh.body.content.video_url)).status).toBe(200);
    } finally {
      sim.state.options.urlTtlS = 3600;
    }
  });
});

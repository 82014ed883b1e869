import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, tempDir, type TestGateway } from './helpers/gateway.js';
import { createTask, eventually, readTask, simFault, waitForTask } from './helpers/video.js';
import { startS3, s3Storage } from './helpers/s3.js';
import { sampleVideo } from '../src/simulator/mp4.js';
import { ArchivesRepo, newArchiveJob } from '../src/store/repos/archives.js';

// The durable archive: a SUCCESS is copied to storage (a local directory, or a real S3-compatible
// server), and /content serves it with Range after the provider's URL expired and after the
// provider forgot the task. Without storage, /content streams from the provider.

const video = sampleVideo();

async function content(gw: TestGateway, key: string, taskId: string, range?: string) {
  const res = await fetch(`${gw.url}/v1/video/generations/${taskId}/content`, { headers: { authorization: `Bearer ${key}`, ...(range ? { range } : {}) } });
  const body = Buffer.from(await res.arrayBuffer());
  return { status: res.status, headers: res.headers, body };
}

/** Makes the simulator forget a finished task (Ark deletes a finished task's record on DELETE). */
async function providerForgets(gw: TestGateway, taskId: string): Promise<void> {
  const sim = gw.services.simulator!.url;
  const auth = { authorization: 'Bearer simulator-key' };
  expect((await fetch(`${sim}/api/v3/contents/generations/tasks/${taskId}`, { method: 'DELETE', headers: auth })).status).toBe(200);
  expect((await fetch(`${sim}/api/v3/contents/generations/tasks/${taskId}`, { headers: auth })).status).toBe(404);
}

async function finishedTask(gw: TestGateway, key: string, prompt = 'a corgi runs on grass'): Promise<any> {
  const created = await createTask(gw.url, key, { model: 'sim-video', prompt });
  expect(created.status).toBe(200);
  return waitForTask(gw.url, key, created.body.data.task_id, (r) => r.status === 'SUCCESS');
}

async function waitStored(gw: TestGateway, taskId: string) {
  return eventually(async () => {
    const row = await gw.services.lifecycle.archives.get(taskId);
    return row?.state === 'stored' && row;
  }, 10_000, `the archive copy of ${taskId}`);
}

async function waitUrlExpired(gw: TestGateway, taskId: string): Promise<void> {
  const row = await gw.services.tasks.repo.get(taskId);
  const wait = row!.url_expires_at - Date.now() + 50;
  expect(wait).toBeLessThan(2000);
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
}

function expectRange(r: { status: number; headers: Headers; body: Buffer }, start: number, end: number) {
  expect(r.status).toBe(206);
  expect(r.headers.get('content-range')).toBe(`bytes ${start}-${end}/${video.length}`);
  expect(r.headers.get('content-length')).toBe(String(end - start + 1));
  expect(r.headers.get('accept-ranges')).toBe('bytes');
  expect(r.headers.get('content-type')).toBe('video/mp4');
  expect(r.body.equals(video.subarray(start, end + 1))).toBe(true);
}

const backends: { name: string; setup(): Promise<{ storage: Record<string, unknown>; stored(taskId: string): boolean | Promise<boolean>; close(): Promise<void> }> }[] = [
  {
    name: 'a local directory',
    async setup() {
      const dir = tempDir('mediagate-videos-');
      return { storage: { type: 'local', dir: dir.path }, stored: (id) => existsSync(join(dir.path, `${id}.mp4`)), close: async () => dir.remove() };
    },
  },
  {
    name: 'a real S3-compatible server',
    async setup() {
      const s3 = await startS3('videos');
      const { S3Client, HeadObjectCommand } = await import('@aws-sdk/client-s3');
      const client = new S3Client({ endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } });
      return {
        storage: s3Storage(s3),
        async stored(id) {
          try {
            const head = await client.send(new HeadObjectCommand({ Bucket: s3.bucket, Key: `archive/${id}.mp4` }));
            return head.ContentLength === video.length;
          } catch {
            return false;
          }
        },
        close: async () => {
          client.destroy();
          await s3.close();
        },
      };
    },
  },
];

for (const backend of backends) {
  describe(`archive to ${backend.name}`, () => {
    let gw: TestGateway;
    let env: Awaited<ReturnType<(typeof backends)[number]['setup']>>;
    beforeAll(async () => {
      env = await backend.setup();
      gw = await startGateway({
        simulator: { embedded: true, video_seconds: 0.3, url_ttl_s: 1 },
        storage: { ...env.storage, retry_delays_s: [0.05, 0.05, 0.05], tick_ms: 20 },
      });
    });
    afterAll(async () => {
      await gw.close();
      await env.close();
    });

    it('copies a SUCCESS and serves it by Range after the URL expired and the provider forgot the task', async () => {
      const { key } = await gw.createKey();
      const task = await finishedTask(gw, key);
      const copy = await waitStored(gw, task.task_id);
      expect(copy.bytes).toBe(video.length);
      expect(await env.stored(task.task_id)).toBe(true);
      await waitUrlExpired(gw, task.task_id);
      await providerForgets(gw, task.task_id);

      expectRange(await content(gw, key, task.task_id, 'bytes=100-199'), 100, 199);
      expectRange(await content(gw, key, task.task_id, 'bytes=-10'), video.length - 10, video.length - 1);
      expectRange(await content(gw, key, task.task_id, `bytes=${video.length - 5}-`), video.length - 5, video.length - 1);
      const whole = await content(gw, key, task.task_id);
      expect(whole.status).toBe(200);
      expect(whole.headers.get('content-length')).toBe(String(video.length));
      expect(whole.body.equals(video)).toBe(true);
      const past = await content(gw, key, task.task_id, `bytes=${video.length}-`);
      expect(past.status).toBe(416);
      expect(past.headers.get('content-range')).toBe(`bytes */${video.length}`);
    });

    it("answers 404 task_not_exist for another key's task", async () => {
      const { key } = await gw.createKey();
      const other = await gw.createKey();
      const task = await finishedTask(gw, key);
      const r = await content(gw, other.key, task.task_id);
      expect(r.status).toBe(404);
      expect(JSON.parse(r.body.toString())).toEqual({ code: 'task_not_exist', message: 'The task does not exist.', data: null });
    });

    it('retries a failed copy with backoff and stores it once the download works', async () => {
      const { key } = await gw.createKey();
      // Copies of earlier tests' tasks must not take the injected faults.
      const db = gw.services.store.db;
      await eventually(async () => !(await db.selectFrom('task_archives').select('task_id').where('state', '=', 'pending').executeTakeFirst()), 10_000, 'earlier copies');
      await simFault(gw.services.simulator!.url, { match: 'ark.video.file', kind: 'status', status: 500, count: 2 });
      const task = await finishedTask(gw, key);
      const copy = await waitStored(gw, task.task_id);
      expect(copy.attempts).toBe(2);
      expect(copy.bytes).toBe(video.length);
    });
  });
}

describe('archive settings', () => {
  it('deletes copies older than retain_days; /content then streams from the provider again', async () => {
    const dir = tempDir('mediagate-videos-');
    const gw = await startGateway({ storage: { type: 'local', dir: dir.path, retain_days: 1 / 86_400, tick_ms: 20 } });
    try {
      const { key } = await gw.createKey();
      const task = await finishedTask(gw, key);
      await waitStored(gw, task.task_id);
      await eventually(async () => (await gw.services.lifecycle.archives.get(task.task_id))?.state === 'deleted', 10_000, 'retention');
      expect(existsSync(join(dir.path, `${task.task_id}.mp4`))).toBe(false);
      const r = await content(gw, key, task.task_id, 'bytes=0-9');
      expectRange(r, 0, 9);
    } finally {
      await gw.close();
      dir.remove();
    }
  });

  it('with public_url_mode gateway, fail_reason is the absolute /content URL of the gateway', async () => {
    const dir = tempDir('mediagate-videos-');
    const gw = await startGateway({ server: { host: '127.0.0.1', port: 0, public_url: 'https://videos.example.com/gw' }, storage: { type: 'local', dir: dir.path, public_url_mode: 'gateway' } });
    try {
      const { key } = await gw.createKey();
      const task = await finishedTask(gw, key);
      const url = `https://videos.example.com/gw/v1/video/generations/${task.task_id}/content`;
      expect(task.fail_reason).toBe(url);
      const listed = await (await fetch(`${gw.url}/v1/video/generations`, { headers: { authorization: `Bearer ${key}` } })).json();
      expect((listed as any).data.tasks[0].fail_reason).toBe(url);
    } finally {
      await gw.close();
      dir.remove();
    }
  });

  it('without public_url, the /content URL is built from the Host the client called', async () => {
    const gw = await startGateway({ storage: { type: 'none', public_url_mode: 'gateway' } });
    try {
      const { key } = await gw.createKey();
      const task = await finishedTask(gw, key);
      expect(task.fail_reason).toBe(`${gw.url}/v1/video/generations/${task.task_id}/content`);
      const r = await content(gw, key, task.task_id, 'bytes=0-99');
      expectRange(r, 0, 99);
    } finally {
      await gw.close();
    }
  });

  it('one instance claims a copy job: two racing claims never both get it', async () => {
    const gw = await startGateway({ storage: { type: 'none' } });
    try {
      const { store } = gw.services;
      const a = new ArchivesRepo(store.db, store.dialect);
      const b = new ArchivesRepo(store.db, store.dialect);
      const now = Date.now();
      for (let i = 0; i < 20; i++) await a.insert(newArchiveJob(`task-${i}`, `task-${i}.mp4`, now));
      const [ca, cb] = await Promise.all([a.claimDue('a', now, now + 60_000, 15), b.claimDue('b', now, now + 60_000, 15)]);
      const ids = [...ca, ...cb].map((r) => r.task_id);
      expect(ids.length).toBe(20);
      expect(new Set(ids).size).toBe(20);
      expect(await a.claimDue('c', now, now + 60_000, 20)).toEqual([]);
    } finally {
      await gw.close();
    }
  });
});

describe('content from the provider (no storage)', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway({ simulator: { embedded: true, video_seconds: 0.3, url_ttl_s: 1 } });
  });
  afterAll(async () => gw.close());

  it('streams by Range, refreshing an expired URL, and answers 404 video_unavailable once the provider forgot the task', async () => {
    const { key } = await gw.createKey();
    const task = await finishedTask(gw, key);
    expectRange(await content(gw, key, task.task_id, 'bytes=0-63'), 0, 63);
    await waitUrlExpired(gw, task.task_id);
    expectRange(await content(gw, key, task.task_id, 'bytes=64-127'), 64, 127);
    const fresh = await readTask(gw.url, key, task.task_id);
    expect(fresh.body.data.fail_reason).not.toBe(task.fail_reason);
    await providerForgets(gw, task.task_id);
    await waitUrlExpired(gw, task.task_id);
    const gone = await content(gw, key, task.task_id);
    expect(gone.status).toBe(404);
    expect(JSON.parse(gone.body.toString()).code).toBe('video_unavailable');
  });

  it('answers 404 video_not_ready for an unfinished task and 400 for a malformed id', async () => {
    const { key } = await gw.createKey();
    const created = await createTask(gw.url, key, { model: 'sim-video', prompt: '[stuck] forever' });
    const r = await content(gw, key, created.body.data.task_id);
    expect(r.status).toBe(404);
    expect(JSON.parse(r.body.toString()).code).toBe('video_not_ready');
    const bad = await content(gw, key, 'bad%20id');
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body.toString()).code).toBe('invalid_task_id');
  });
});

describe('S3 storage', () => {
  it('streams a body larger than one part as a multipart upload and reads ranges of it back', async () => {
    const { Readable } = await import('node:stream');
    const { S3Storage } = await import('../src/storage/s3-storage.js');
    const s3 = await startS3('bigvideos');
    try {
      const storage = new S3Storage((s3Storage(s3) as any).s3);
      const chunk = (i: number) => Buffer.alloc(1024 * 1024, i % 251);
      const total = 19; // MiB: three 8 MiB parts
      const bytes = await storage.put('big.mp4', Readable.from((function* () {
        for (let i = 0; i < total; i++) yield chunk(i);
      })()), 'video/mp4');
      expect(bytes).toBe(total * 1024 * 1024);
      const read = async (start: number, end: number) => {
        const parts: Buffer[] = [];
        for await (const c of await storage.read('big.mp4', { start, end })) parts.push(c as Buffer);
        return Buffer.concat(parts);
      };
      const across = await read(8 * 1024 * 1024 - 2, 8 * 1024 * 1024 + 1);
      expect([...across]).toEqual([7, 7, 8, 8]);
      const tail = await read(bytes - 3, bytes - 1);
      expect([...tail]).toEqual([18, 18, 18]);
    } finally {
      await s3.close();
    }
  });
});

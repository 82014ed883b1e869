import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from './helpers/gateway.js';
import { openStore, type Store } from '../src/store/db.js';
import { TasksRepo, type TaskRow } from '../src/store/repos/tasks.js';
import { taskRow } from './helpers/task-row.js';

// GET /v1/video/generations/{id} keeps each task's answer bytes while the task reads the same
// (src/tasks/read-answer.ts). Every write must show in the very next read: writes through the
// gateway's own store and through a second store on the same database (another instance).

let seq = 0;
function row(keyId: string, over: Partial<TaskRow> = {}): TaskRow {
  const now = Date.now();
  const id = `cgt-20250101000000-r${(seq++).toString(36).padStart(4, '0')}`;
  return taskRow(keyId, {
    task_id: id,
    submit_time: Math.floor(now / 1000) - 30,
    start_time: Math.floor(now / 1000) - 20,
    progress: '40%',
    data: JSON.stringify({ id, status: 'running' }),
    next_poll_at: now + 3_600_000,
    ...over,
  });
}

async function read(gw: TestGateway, key: string, id: string) {
  const res = await fetch(`${gw.url}/v1/video/generations/${id}`, { headers: { authorization: `Bearer ${key}` } });
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
}

describe('task read answers kept per task version', () => {
  let gw: TestGateway;
  let owner: { id: string; key: string };
  let other: { id: string; key: string };
  let second: Store;
  let elsewhere: TasksRepo;

  beforeAll(async () => {
    // No poller: only the test moves these tasks.
    gw = await startGateway({}, { noPoller: true });
    owner = await gw.createKey({ name: 'owner' });
    other = await gw.createKey({ name: 'other' });
    second = await openStore(gw.config.database.url, { migrate: false, backgroundCheckpoints: false });
    elsewhere = new TasksRepo(second.db, second.dialect);
  });
  afterAll(async () => {
    await second.close();
    await gw.close();
  });

  it('answers the same bytes for an unchanged task, as JSON, and the TaskRecord fields only', async () => {
    const r = row(owner.id, { status: 'SUCCESS', progress: '100%', fail_reason: 'https://example.com/v.mp4', finish_time: Math.floor(Date.now() / 1000) });
    await gw.services.tasks.repo.insert(r);
    const first = await read(gw, owner.key, r.task_id);
    const again = await read(gw, owner.key, r.task_id);
    expect(first.status).toBe(200);
    expect(first.type).toBe('application/json; charset=utf-8');
    expect(again.text).toBe(first.text);
    const body = JSON.parse(first.text);
    expect(body).toEqual({
      code: 'success',
      message: '',
      data: {
        task_id: r.task_id,
        action: 'textGenerate',
        status: 'SUCCESS',
        fail_reason: 'https://example.com/v.mp4',
        submit_time: r.submit_time,
        start_time: r.start_time,
        finish_time: r.finish_time,
        progress: '100%',
        data: { id: r.task_id, status: 'running' },
      },
    });
  });

  it('shows a status change written by this instance in the next read', async () => {
    const r = row(owner.id);
    await gw.services.tasks.repo.insert(r);
    expect(JSON.parse((await read(gw, owner.key, r.task_id)).text).data.status).toBe('IN_PROGRESS');
    const data = JSON.stringify({ id: r.task_id, status: 'succeeded', content: { video_url: 'https://example.com/new.mp4' } });
    const moved = await gw.services.tasks.repo.move(r.task_id, 'IN_PROGRESS', { status: 'SUCCESS', progress: '100%', fail_reason: 'https://example.com/new.mp4', finish_time: Math.floor(Date.now() / 1000), data, updated_at: Date.now() });
    expect(moved).toBe(true);
    const after = JSON.parse((await read(gw, owner.key, r.task_id)).text).data;
    expect(after.status).toBe('SUCCESS');
    expect(after.progress).toBe('100%');
    expect(after.fail_reason).toBe('https://example.com/new.mp4');
    expect(after.data).toEqual(JSON.parse(data));
  });

  it('shows every write of another instance (another store on the same database) in the next read', async () => {
    const r = row(owner.id, { status: 'QUEUED', progress: '5%', start_time: 0 });
    await elsewhere.insert(r);
    expect(JSON.parse((await read(gw, owner.key, r.task_id)).text).data.status).toBe('QUEUED');
    // Same status, new provider object: still a new answer.
    await elsewhere.move(r.task_id, 'QUEUED', { data: JSON.stringify({ id: r.task_id, status: 'queued', queue_position: 3 }), updated_at: Date.now() });
    expect(JSON.parse((await read(gw, owner.key, r.task_id)).text).data.data).toEqual({ id: r.task_id, status: 'queued', queue_position: 3 });
    await elsewhere.move(r.task_id, 'QUEUED', { status: 'FAILURE', progress: '100%', fail_reason: 'failed: out of credit', finish_time: Math.floor(Date.now() / 1000), updated_at: Date.now() });
    const failed = JSON.parse((await read(gw, owner.key, r.task_id)).text).data;
    expect(failed.status).toBe('FAILURE');
    expect(failed.fail_reason).toBe('failed: out of credit');
    // Hidden by a delete on the other instance: gone at once, in the video envelope.
    expect(await elsewhere.markDeleted(r.task_id, Date.now())).toBe(true);
    const gone = await read(gw, owner.key, r.task_id);
    expect(gone.status).toBe(404);
    expect(JSON.parse(gone.text)).toMatchObject({ code: 'task_not_exist', data: null });
  });

  it("never answers another key's task, even once its owner's answer is kept", async () => {
    const r = row(owner.id, { status: 'SUCCESS', progress: '100%', fail_reason: 'https://example.com/v.mp4' });
    await gw.services.tasks.repo.insert(r);
    expect((await read(gw, owner.key, r.task_id)).status).toBe(200);
    const theirs = await read(gw, other.key, r.task_id);
    expect(theirs.status).toBe(404);
    expect(JSON.parse(theirs.text)).toMatchObject({ code: 'task_not_exist', data: null });
  });

  it('keeps the progress of a running task live (it grows with time, not with writes)', async () => {
    const nowS = Math.floor(Date.now() / 1000);
    // Started just now: the curve moves within a few seconds of reads.
    const r = row(owner.id, { start_time: nowS, progress: '10%' });
    await gw.services.tasks.repo.insert(r);
    const first = parseInt(JSON.parse((await read(gw, owner.key, r.task_id)).text).data.progress, 10);
    const deadline = Date.now() + 20_000;
    let later = first;
    while (later === first && Date.now() < deadline) {
      await new Promise((res) => setTimeout(res, 250));
      later = parseInt(JSON.parse((await read(gw, owner.key, r.task_id)).text).data.progress, 10);
    }
    expect(later).toBeGreaterThan(first);
  });
});

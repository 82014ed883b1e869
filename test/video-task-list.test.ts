import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from './helpers/gateway.js';
import { createTask, isFinished, waitForTask } from './helpers/video.js';
import type { TaskRow } from '../src/store/repos/tasks.js';
import { taskRow } from './helpers/task-row.js';

// GET /v1/video/generations: a key's own tasks, newest first, cursor pages, filters, and 400s in
// the video envelope for bad parameters.

function seededRow(keyId: string, i: number, over: Partial<TaskRow> = {}): TaskRow {
  return taskRow(keyId, {
    task_id: `cgt-20250101000000-${i.toString(36).padStart(5, '0')}`,
    model: i % 3 === 0 ? 'sim-video' : 'doubao-seedance-1-0-pro-250528',
    status: i % 2 === 0 ? 'SUCCESS' : 'FAILURE',
    fail_reason: i % 2 === 0 ? 'https://example.com/v.mp4' : 'failed: no',
    // Pairs of tasks share a second, so ties are ordered by task id.
    submit_time: 1_700_000_000 + Math.floor(i / 2),
    progress: '100%',
    data: JSON.stringify({ id: `seed-${i}` }),
    ...over,
  });
}

async function list(gw: TestGateway, key: string, query = '') {
  const res = await fetch(`${gw.url}/v1/video/generations${query}`, { headers: { authorization: `Bearer ${key}` } });
  return { status: res.status, body: (await res.json()) as any };
}

describe('listing video tasks', () => {
  let gw: TestGateway;
  let owner: { id: string; key: string };
  let other: { id: string; key: string };
  const SEEDED = 45;

  beforeAll(async () => {
    gw = await startGateway();
    owner = await gw.createKey({ name: 'owner' });
    other = await gw.createKey({ name: 'other' });
    for (let i = 0; i < SEEDED; i++) await gw.services.tasks.repo.insert(seededRow(owner.id, i));
    await gw.services.tasks.repo.insert(seededRow(other.id, 1000));
  });
  afterAll(async () => gw.close());

  it('pages through every own task newest first, each exactly once, with limit and next_after', async () => {
    const seen: any[] = [];
    let after = '';
    let pages = 0;
    for (;;) {
      const r = await list(gw, owner.key, `?limit=10${after ? `&after=${after}` : ''}`);
      expect(r.status).toBe(200);
      expect(r.body.code).toBe('success');
      expect(r.body.message).toBe('');
      pages++;
      seen.push(...r.body.data.tasks);
      if (!r.body.data.has_more) {
        expect(r.body.data.next_after).toBeNull();
        break;
      }
      expect(r.body.data.tasks).toHaveLength(10);
      after = r.body.data.next_after;
    }
    expect(pages).toBe(5);
    expect(seen.map((t) => t.task_id)).toEqual(
      Array.from({ length: SEEDED }, (_, k) => seededRow(owner.id, SEEDED - 1 - k).task_id),
    );
    // Records are TaskRecords and nothing more.
    expect(Object.keys(seen[0]).sort()).toEqual(['action', 'data', 'fail_reason', 'finish_time', 'progress', 'start_time', 'status', 'submit_time', 'task_id']);
  });

  it('defaults to 20 a page', async () => {
    const r = await list(gw, owner.key);
    expect(r.body.data.tasks).toHaveLength(20);
    expect(r.body.data.has_more).toBe(true);
  });

  it('filters by status and by model, and pages within the filter', async () => {
    const failures = await list(gw, owner.key, '?status=FAILURE&limit=100');
    expect(failures.body.data.tasks.length).toBe(22);
    expect(failures.body.data.tasks.every((t: any) => t.status === 'FAILURE')).toBe(true);
    const sim = await list(gw, owner.key, '?model=sim-video&limit=5');
    expect(sim.body.data.tasks).toHaveLength(5);
    const rest = await list(gw, owner.key, `?model=sim-video&limit=100&after=${sim.body.data.next_after}`);
    expect(sim.body.data.tasks.length + rest.body.data.tasks.length).toBe(15);
    expect(rest.body.data.has_more).toBe(false);
    const both = await list(gw, owner.key, '?model=sim-video&status=SUCCESS&limit=100');
    expect(both.body.data.tasks.map((t: any) => t.task_id).sort()).toEqual([0, 6, 12, 18, 24, 30, 36, 42].map((i) => seededRow(owner.id, i).task_id).sort());
  });

  it('pages every filter combination (status, model, both, neither) to exactly its tasks, in order', async () => {
    // The seeded tasks as the list must show them: newest submit_time first, ties by task id, descending.
    const seeded = Array.from({ length: SEEDED }, (_, i) => seededRow(owner.id, i));
    const expected = (status?: string, model?: string) =>
      seeded
        .filter((r) => (!status || r.status === status) && (!model || r.model === model))
        .sort((a, b) => b.submit_time - a.submit_time || (a.task_id < b.task_id ? 1 : -1))
        .map((r) => r.task_id);
    for (const status of [undefined, 'SUCCESS', 'FAILURE']) {
      for (const model of [undefined, 'sim-video']) {
        const seen: string[] = [];
        let after: string | null = null;
        for (let pages = 0; pages < 50; pages++) {
          const q = new URLSearchParams({ limit: '4' });
          if (status) q.set('status', status);
          if (model) q.set('model', model);
          if (after) q.set('after', after);
          const r = await list(gw, owner.key, `?${q}`);
          expect(r.status).toBe(200);
          seen.push(...r.body.data.tasks.map((t: any) => t.task_id));
          after = r.body.data.next_after;
          if (!r.body.data.has_more) break;
        }
        expect({ status, model, seen }).toEqual({ status, model, seen: expected(status, model) });
      }
    }
  });

  it("shows a key only its own tasks, including ones created through the API", async () => {
    const fresh = await gw.createKey({ name: 'fresh' });
    const created = await createTask(gw.url, fresh.key, { model: 'sim-video', prompt: 'a corgi' });
    expect(created.status).toBe(200);
    await waitForTask(gw.url, fresh.key, created.body.data.task_id, isFinished);
    const mine = await list(gw, fresh.key);
    expect(mine.body.data.tasks.map((t: any) => t.task_id)).toEqual([created.body.data.task_id]);
    expect(mine.body.data.has_more).toBe(false);
    const theirs = await list(gw, other.key, '?limit=100');
    expect(theirs.body.data.tasks.map((t: any) => t.task_id)).toEqual([seededRow(other.id, 1000).task_id]);
    const owners = await list(gw, owner.key, '?limit=100');
    expect(owners.body.data.tasks.map((t: any) => t.task_id)).not.toContain(created.body.data.task_id);
  });

  it('answers an empty page for a key with no tasks', async () => {
    const none = await gw.createKey({ name: 'none' });
    const r = await list(gw, none.key, '?status=QUEUED');
    expect(r.body).toEqual({ code: 'success', message: '', data: { tasks: [], has_more: false, next_after: null } });
  });

  for (const [query, param] of [
    ['?limit=0', 'limit'],
    ['?limit=101', 'limit'],
    ['?limit=abc', 'limit'],
    ['?limit=1&limit=2', 'limit'],
    ['?status=DONE', 'status'],
    ['?status=success', 'status'],
    ['?after=notacursor!', 'after'],
    [`?after=${Buffer.from('12.bad id').toString('base64url')}`, 'after'],
    ['?page=2', 'page'],
  ]) {
    it(`answers 400 invalid_request in the video envelope for ${query}`, async () => {
      const r = await list(gw, owner.key, query);
      expect(r.status).toBe(400);
      expect(r.body.code).toBe('invalid_request');
      expect(r.body.data).toBeNull();
      expect(r.body.message).toContain(param);
    });
  }

  it('answers 401 in the video envelope without a key', async () => {
    const res = await fetch(`${gw.url}/v1/video/generations`);
    expect(res.status).toBe(401);
    expect(((await res.json()) as any).code).toBe('invalid_api_key');
  });
});

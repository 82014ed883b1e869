import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, usageRowsOf, type TestGateway } from './helpers/gateway.js';
import { createTask, eventually, readTask, simVideoStats, waitForTask } from './helpers/video.js';
import { bindTask } from '../src/tasks/binding.js';

// POST /v1/video/generations/{task_id}/cancel: a queued task is cancelled at the provider, ends
// FAILURE "cancelled: …" and its credit hold is released once; a running task is 409 and untouched.

async function cancel(gw: TestGateway, key: string, taskId: string) {
  const res = await fetch(`${gw.url}/v1/video/generations/${taskId}/cancel`, { method: 'POST', headers: { authorization: `Bearer ${key}` } });
  return { status: res.status, body: (await res.json()) as any };
}

const CREDIT = 10_000_000;

describe('cancelling video tasks', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    // Queued for the first second of a 5 s run.
    gw = await startGateway({ simulator: { embedded: true, video_seconds: 5 } });
  });
  afterAll(async () => gw.close());

  it('cancels a queued task at the provider: FAILURE "cancelled: …", credit released once, then 409', async () => {
    const k = await gw.createKey({ creditMicros: CREDIT });
    const created = await createTask(gw.url, k.key, { model: 'sim-video', prompt: 'a corgi' });
    const id = created.body.data.task_id;
    expect(await gw.services.reservations.balance(k.id)).toBeLessThan(CREDIT);
    const r = await cancel(gw, k.key, id);
    expect(r.status).toBe(200);
    expect(r.body.code).toBe('success');
    expect(r.body.data.status).toBe('FAILURE');
    expect(r.body.data.fail_reason).toMatch(/^cancelled: /);
    const row = await gw.services.tasks.repo.get(id);
    expect((await simVideoStats(gw.services.simulator!.url)).tasks[row!.upstream_id].status).toBe('cancelled');
    expect(await gw.services.reservations.balance(k.id)).toBe(CREDIT);
    const again = await cancel(gw, k.key, id);
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ code: 'task_not_cancellable', data: null });
    // The poller reads the provider's "cancelled" later: nothing changes, nothing is released twice.
    await new Promise((res) => setTimeout(res, 300));
    const read = await readTask(gw.url, k.key, id);
    expect(read.body.data.fail_reason).toBe(r.body.data.fail_reason);
    const settles = (await usageRowsOf(gw.services, k.id)).filter((u) => u.endpoint === 'video.settle');
    expect(settles).toHaveLength(1);
    expect(Number(settles[0].cost_micros)).toBe(0);
    expect(await gw.services.reservations.balance(k.id)).toBe(CREDIT);
  });

  it('answers 409 task_not_cancellable for a running task and changes nothing', async () => {
    const k = await gw.createKey({ creditMicros: CREDIT });
    const created = await createTask(gw.url, k.key, { model: 'sim-video', prompt: 'a corgi' });
    const id = created.body.data.task_id;
    await waitForTask(gw.url, k.key, id, (t) => t.status === 'IN_PROGRESS');
    const held = await gw.services.reservations.balance(k.id);
    const r = await cancel(gw, k.key, id);
    expect(r.status).toBe(409);
    expect(r.body.code).toBe('task_not_cancellable');
    expect(r.body.data).toBeNull();
    expect((await readTask(gw.url, k.key, id)).body.data.status).toBe('IN_PROGRESS');
    expect(await gw.services.reservations.balance(k.id)).toBe(held);
  });

  it("answers 404 for another key's task and 400 for a malformed id", async () => {
    const k = await gw.createKey();
    const other = await gw.createKey();
    const created = await createTask(gw.url, k.key, { model: 'sim-video', prompt: 'a corgi' });
    expect((await cancel(gw, other.key, created.body.data.task_id)).body.code).toBe('task_not_exist');
    expect((await cancel(gw, k.key, 'bad%20id')).status).toBe(400);
  });

  it('a cancel racing a poller that sees success settles exactly once', async () => {
    for (let round = 0; round < 5; round++) {
      const k = await gw.createKey({ creditMicros: CREDIT });
      const created = await createTask(gw.url, k.key, { model: 'sim-video', prompt: 'a corgi' });
      const row = (await gw.services.tasks.repo.get(created.body.data.task_id))!;
      const bound = bindTask(gw.config.channels, row)!;
      const raw = { id: row.upstream_id, status: 'succeeded', content: { video_url: 'https://example.com/v.mp4' }, usage: { total_tokens: 1000, completion_tokens: 1000 }, updated_at: Math.floor(Date.now() / 1000) };
      const { transitions } = gw.services.tasks;
      const [a, b] = await Promise.all([transitions.fail(row, 'cancelled: by its owner', Date.now(), 499), transitions.apply(row, raw, bound.adapter.view(raw))]);
      expect(['SUCCESS', 'FAILURE']).toContain(a.status);
      expect(b.status).toBe(a.status);
      const settles = (await usageRowsOf(gw.services, k.id)).filter((u) => u.endpoint === 'video.settle');
      expect(settles).toHaveLength(1);
      const balance = await gw.services.reservations.balance(k.id);
      expect(balance).toBe(a.status === 'SUCCESS' ? CREDIT - Number(settles[0].cost_micros) : CREDIT);
      await eventually(async () => (await gw.services.tasks.repo.get(row.task_id))?.status === a.status, 2000, 'a stable status');
    }
  });
});

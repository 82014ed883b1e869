import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WAN_DEFAULT_MODELS } from '../src/providers/dashscope/models.js';
import { startSimulator, type Simulator } from '../src/simulator/server.js';
import { usageRowsOf } from './helpers/gateway.js';
import { balanceOf, providerRig, type ProviderRig } from './helpers/provider-video.js';
import { createTask } from './helpers/video.js';

// DELETE /v1/videos/{id} while POST …/cancel of the same task is under way. DashScope refuses to
// cancel a task it has already cancelled, so the request that reaches it second used to be told
// "cannot cancel" (and the DELETE "still being generated") although the task was being cancelled.
// Now a refused cancel of a task the provider holds as cancelled records the cancellation: both
// requests succeed, and the credit hold is released once.

const CREDIT = 50_000_000;
const MODEL = 'wan2.5-t2v-preview';

describe('deleting a video while it is being cancelled', () => {
  let sim: Simulator;
  let rig: ProviderRig;
  beforeAll(async () => {
    // Tasks stay queued (cancellable) for 12 s; no poller, so only the requests move them.
    sim = await startSimulator({ videoSeconds: 60, urlTtlS: 3600 });
    rig = await providerRig('dashscope', WAN_DEFAULT_MODELS, {}, {}, { sim, noPoller: true });
  });
  afterAll(async () => {
    await rig?.close();
    await sim?.close();
  });

  const auth = (key: string) => ({ authorization: `Bearer ${key}` });
  const del = async (key: string, id: string) => {
    const res = await fetch(`${rig.gw.url}/v1/videos/${id}`, { method: 'DELETE', headers: auth(key) });
    return { status: res.status, body: (await res.json()) as any };
  };
  const cancel = async (key: string, id: string) => {
    const res = await fetch(`${rig.gw.url}/v1/video/generations/${id}/cancel`, { method: 'POST', headers: auth(key) });
    return { status: res.status, body: (await res.json()) as any };
  };
  const newTask = async (key: string) => {
    const created = await createTask(rig.gw.url, key, { model: MODEL, prompt: 'a corgi', duration: 5, resolution: '480p' });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    return created.body.data.task_id as string;
  };
  /** Cancels the task at the provider itself, as another instance's cancel does before it records it. */
  const cancelAtProvider = async (taskId: string) => {
    const row = (await rig.gw.services.tasks.repo.get(taskId))!;
    const res = await fetch(`${sim.url}/api/v1/tasks/${row.upstream_id}/cancel`, { method: 'POST', headers: { authorization: 'Bearer dashscope-test-key' } });
    expect(res.status).toBe(200);
  };

  it('deletes every video of a storm of DELETEs racing cancels; each hold is released once', async () => {
    const k = await rig.gw.createKey({ creditMicros: CREDIT });
    const ids: string[] = [];
    for (let i = 0; i < 16; i++) ids.push(await newTask(k.key));
    expect(await balanceOf(rig.gw, k.id)).toBeLessThan(CREDIT);
    const answers = await Promise.all(ids.map(async (id) => Promise.all([cancel(k.key, id), del(k.key, id)])));
    for (const [c, d] of answers) {
      expect(d, JSON.stringify(d.body)).toMatchObject({ status: 200, body: { deleted: true } });
      // The cancel either recorded the cancellation itself or found the video already deleted.
      if (c.status === 200) expect(c.body.data).toMatchObject({ status: 'FAILURE', fail_reason: expect.stringMatching(/^cancelled: /) });
      else expect(c).toMatchObject({ status: 404, body: { code: 'task_not_exist' } });
    }
    for (const id of ids) expect((await rig.gw.services.tasks.repo.get(id))!.status).toBe('FAILURE');
    expect(await balanceOf(rig.gw, k.id)).toBe(CREDIT);
    const settles = (await usageRowsOf(rig.gw.services, k.id)).filter((u) => u.endpoint === 'video.settle');
    expect(settles).toHaveLength(ids.length);
  });

  it('deletes a video another request has already cancelled at the provider but not yet recorded', async () => {
    const k = await rig.gw.createKey({ creditMicros: CREDIT });
    const id = await newTask(k.key);
    await cancelAtProvider(id);
    const d = await del(k.key, id);
    expect(d, JSON.stringify(d.body)).toMatchObject({ status: 200, body: { id, deleted: true } });
    const row = (await rig.gw.services.tasks.repo.get(id))!;
    expect(row.status).toBe('FAILURE');
    expect(row.deleted_at).not.toBeNull();
    expect(await balanceOf(rig.gw, k.id)).toBe(CREDIT);
  });

  it('answers a second cancel of such a task with the cancelled task, not "cannot cancel"', async () => {
    const k = await rig.gw.createKey({ creditMicros: CREDIT });
    const id = await newTask(k.key);
    await cancelAtProvider(id);
    const c = await cancel(k.key, id);
    expect(c, JSON.stringify(c.body)).toMatchObject({ status: 200, body: { code: 'success', data: { task_id: id, status: 'FAILURE' } } });
    expect(await balanceOf(rig.gw, k.id)).toBe(CREDIT);
    // Once recorded, a further cancel is the plain "already ended".
    expect(await cancel(k.key, id)).toMatchObject({ status: 409, body: { code: 'task_not_cancellable' } });
    expect((await usageRowsOf(rig.gw.services, k.id)).filter((u) => u.endpoint === 'video.settle')).toHaveLength(1);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from './helpers/gateway.js';
import { SIMULATOR_MODELS } from '../src/config-file/defaults.js';
import { createTask, eventually, isFinished, simFault, simVideoConfig, simVideoStats, waitForTask } from './helpers/video.js';

// The poller: bounded concurrency per channel, no writes for unchanged answers, backoff on errors.

describe('video task poller', () => {
  let gw: TestGateway;
  let sim: string;
  beforeAll(async () => {
    gw = await startGateway({
      tasks: { poll_interval_ms: 50, tick_ms: 20, max_backoff_ms: 400 },
      channels: [{ name: 'simulator', type: 'simulator', poll_concurrency: 2, models: Object.keys(SIMULATOR_MODELS) }],
      models: SIMULATOR_MODELS,
    });
    sim = gw.services.simulator!.url;
  });
  afterAll(async () => gw.close());

  it('keeps at most poll_concurrency polls in flight against a channel', async () => {
    await simVideoConfig(sim, { get_delay_ms: 120 });
    try {
      const { key } = await gw.createKey();
      const ids: string[] = [];
      for (let i = 0; i < 8; i++) ids.push((await createTask(gw.url, key, { model: 'sim-video', prompt: `busy ${i}` })).body.data.task_id);
      for (const id of ids) expect((await waitForTask(gw.url, key, id, isFinished, 25_000)).status).toBe('SUCCESS');
      const stats = await simVideoStats(sim);
      expect(stats.max_inflight_gets).toBeGreaterThanOrEqual(1);
      expect(stats.max_inflight_gets).toBeLessThanOrEqual(2);
    } finally {
      await simVideoConfig(sim, { get_delay_ms: 0 });
    }
  });

  it('does not write a task when the provider answer did not change', async () => {
    const { key } = await gw.createKey();
    const created = await createTask(gw.url, key, { model: 'sim-video', prompt: 'idle [stuck]' });
    const taskId = created.body.data.task_id;
    await waitForTask(gw.url, key, taskId, (r) => r.status === 'IN_PROGRESS');
    const before = await gw.services.tasks.repo.get(taskId);
    const polls = (await simVideoStats(sim)).tasks[taskId].polls;
    await eventually(async () => (await simVideoStats(sim)).tasks[taskId].polls >= polls + 3, 10_000, 'three more polls');
    const after = await gw.services.tasks.repo.get(taskId);
    expect(after!.updated_at).toBe(before!.updated_at);
    expect(after!.data).toBe(before!.data);
    expect(after!.status).toBe('IN_PROGRESS');
  });

  it('backs a task off while the provider answers 5xx, then recovers', async () => {
    const { key } = await gw.createKey();
    // The task may be read alone or in a batch with tasks of earlier tests that are still due
    // (the Ark list by id): both reads fail.
    await simFault(sim, { match: 'ark.video.get', kind: 'status', status: 502, count: 3 });
    await simFault(sim, { match: 'ark.video.list', kind: 'status', status: 502, count: 3 });
    const created = await createTask(gw.url, key, { model: 'sim-video', prompt: 'flaky' });
    const taskId = created.body.data.task_id;
    const backedOff = await eventually(async () => {
      const row = await gw.services.tasks.repo.get(taskId);
      return row && row.poll_failures > 0 ? row : undefined;
    }, 10_000, 'a backoff');
    expect(backedOff.next_poll_at).toBeGreaterThan(backedOff.updated_at);
    const done = await waitForTask(gw.url, key, taskId, isFinished);
    expect(done.status).toBe('SUCCESS');
    expect((await gw.services.tasks.repo.get(taskId))!.poll_failures).toBe(0);
  });

  it('stops without waiting for a poll the provider never answers', async () => {
    // Its own gateway: closing it is the point. The upstream first-byte timeout (60 s) is longer than the test's.
    const own = await startGateway({ tasks: { poll_interval_ms: 50, tick_ms: 20 } });
    const ownSim = own.services.simulator!.url;
    let closing: Promise<void> | undefined;
    try {
      const { key } = await own.createKey();
      await simFault(ownSim, { match: 'ark.video.get', kind: 'hang', count: 1 });
      const created = await createTask(own.url, key, { model: 'sim-video', prompt: 'hung poll' });
      expect(created.status).toBe(200);
      await eventually(async () => {
        const counts = ((await (await fetch(`${ownSim}/__sim/stats`)).json()) as any).counts;
        return (counts['ark.video.get'] ?? 0) >= 1;
      }, 10_000, 'the hung poll');
      closing = own.close();
      await expect(closing).resolves.toBeUndefined();
    } finally {
      if (!closing) await own.close();
    }
  });
});

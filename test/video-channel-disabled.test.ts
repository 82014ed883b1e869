import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyConfig } from '../src/cluster/reload.js';
import { validateConfig } from '../src/config-file/loader.js';
import { sampleVideo } from '../src/simulator/mp4.js';
import { startGateway, type TestGateway } from './helpers/gateway.js';
import { balanceOf } from './helpers/provider-video.js';
import { createTask, eventually, isFinished, readTask } from './helpers/video.js';

// A task keeps the channel it was created on. When that channel is disabled by a reload while the
// task is still running, the task is still polled, judged and settled as that channel's task: the
// same private-network verdict (the simulator hands out loopback result links), the same price.

describe('a video task whose channel is disabled after it was created', () => {
  let gw: TestGateway;

  beforeAll(async () => {
    // No background poller: the test polls, so the task is surely still open when the channel goes.
    gw = await startGateway({}, { noPoller: true });
  });
  afterAll(async () => gw?.close());

  /** Polls the task (as the poller would) until it is finished. */
  const pollToEnd = (taskId: string) =>
    eventually(async () => {
      const row = (await gw.services.tasks.repo.get(taskId))!;
      const after = await gw.services.tasks.poller.pollTask(row);
      return isFinished(after) && after;
    }, 15_000, `task ${taskId} finished`);

  const setEnabled = async (enabled: boolean) => {
    const raw = structuredClone(gw.config) as any;
    for (const ch of raw.channels) {
      if (ch.type === 'simulator') delete ch.base_url;
      ch.enabled = enabled;
    }
    await applyConfig(gw.services, validateConfig(raw, 'reloaded config'));
  };

  it('still gets its result (the channel\'s loopback link) and is charged the model\'s price', async () => {
    const { id: keyId, key } = await gw.createKey({ creditMicros: 10_000_000 });
    const body = { model: 'sim-video', prompt: 'a corgi', duration: 5 };

    // The same request on the enabled channel: what its result and charge look like.
    const before = await createTask(gw.url, key, body);
    expect(before.status).toBe(200);
    const reference = await pollToEnd(before.body.data.task_id);
    expect(reference.status).toBe('SUCCESS');
    const charged = 10_000_000 - (await balanceOf(gw, keyId));
    expect(charged).toBeGreaterThan(0);

    const created = await createTask(gw.url, key, body);
    expect(created.status).toBe(200);
    const taskId = created.body.data.task_id;
    await setEnabled(false);
    try {
      expect(gw.services.catalog.get('sim-video')).toBeUndefined();
      const done = await pollToEnd(taskId);
      expect(done.status, done.fail_reason).toBe('SUCCESS');
      const read = await readTask(gw.url, key, taskId);
      expect(read.body.data.status).toBe('SUCCESS');
      const url = read.body.data.fail_reason;
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//);
      const video = Buffer.from(await (await fetch(url)).arrayBuffer());
      expect(video.equals(sampleVideo())).toBe(true);
      await eventually(async () => (await gw.services.credit.heldCount(keyId)) === 0, 10_000, 'the settle');
      expect(10_000_000 - (await balanceOf(gw, keyId))).toBe(2 * charged);
    } finally {
      await setEnabled(true);
    }
  });
});

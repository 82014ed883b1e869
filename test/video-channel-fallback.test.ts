import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from './helpers/gateway.js';
import { SIMULATOR_MODELS } from '../src/config-file/defaults.js';
import { createTask, isFinished, simFault, waitForTask } from './helpers/video.js';

// Creating a task goes through the relay: a failing channel falls back to the next one, and the
// task is then polled on the channel that created it.

describe('video task channel fallback', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway({
      channels: [
        { name: 'sim-a', type: 'simulator', priority: 0, models: ['sim-video'] },
        { name: 'sim-b', type: 'simulator', priority: 1, models: ['sim-video'] },
      ],
      models: { 'sim-video': SIMULATOR_MODELS['sim-video'] },
    });
  });
  afterAll(async () => gw.close());

  it('creates on the next channel when the first answers 5xx, and polls the task there', async () => {
    const { key } = await gw.createKey();
    await simFault(gw.services.simulator!.url, { match: 'ark.video.create', kind: 'status', status: 500, count: 1 });
    const created = await createTask(gw.url, key, { model: 'sim-video', prompt: 'fallback' });
    expect(created.status).toBe(200);
    const row = await gw.services.tasks.repo.get(created.body.data.task_id);
    expect(row!.channel).toBe('sim-b');
    const done = await waitForTask(gw.url, key, created.body.data.task_id, isFinished);
    expect(done.status).toBe('SUCCESS');
    expect(JSON.stringify(done)).not.toContain('sim-b');
  });
});

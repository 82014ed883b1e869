import { describe, expect, it } from 'vitest';
import { suiteGateway } from './helpers/suite-gateway.js';
import { embeddedDefault } from '../src/config-file/defaults.js';
import { validateConfig } from '../src/config-file/loader.js';
import { createTask, readTask } from './helpers/video.js';

// With the embedded default, a client polling a simulator task sees every state of the table:
// SUBMITTED → QUEUED → IN_PROGRESS → SUCCESS. The default's timings (a 10 s task, its poll
// interval) are run here twice as fast, which keeps their proportions (faster, a busy machine misses the
// short queued window it leaves).

const SPEED = 2;

describe('the embedded default shows QUEUED', () => {
  const s = suiteGateway(() => {
    const def = validateConfig(embeddedDefault({}));
    return {
      simulator: { embedded: true, video_seconds: def.simulator.video_seconds / SPEED },
      tasks: { ...def.tasks, poll_interval_ms: def.tasks.poll_interval_ms / SPEED, tick_ms: def.tasks.tick_ms / SPEED },
      channels: def.channels,
      models: def.models,
    };
  });

  it('moves a task through SUBMITTED, QUEUED, IN_PROGRESS and SUCCESS, each seen by a poller', async () => {
    const { gw, key } = s;
    const created = await createTask(gw.url, key, { model: 'doubao-seedance-1-0-pro-250528', prompt: 'a corgi' });
    expect(created.status).toBe(200);
    const seen: string[] = [created.body.data.status];
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      const { body } = await readTask(gw.url, key, created.body.data.task_id);
      const status = body.data.status as string;
      if (status !== seen[seen.length - 1]) seen.push(status);
      if (status === 'SUCCESS' || status === 'FAILURE') break;
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(seen).toEqual(['SUBMITTED', 'QUEUED', 'IN_PROGRESS', 'SUCCESS']);
  });
});

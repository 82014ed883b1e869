import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { embeddedDefault } from '../src/config-file/defaults.js';
import { tempDir } from './helpers/gateway.js';
import { spawnGateway, type GatewayProcess } from './helpers/gateway-process.js';
import { testDialect } from './helpers/databases.js';
import { IMG, createTask, eventually, readTask, waitForTask, isFinished } from './helpers/video.js';

// The embedded simulator keeps its video tasks across a restart of `mediagate serve`: a task still
// open at shutdown finishes SUCCESS after the next start, on every provider part, instead of
// ending FAILURE because the new simulator never heard of it.

const TASKS = [
  { model: 'doubao-seedance-1-0-pro-250528', prompt: 'a corgi' },
  { model: 'veo-3.1-fast-generate-preview', prompt: 'a corgi', duration: 4 },
  { model: 'kling-v2-6', prompt: 'a corgi', image: IMG(1) },
  { model: 'wan2.5-t2v-preview', prompt: 'a corgi', resolution: '480p' },
  { model: 'MiniMax-Hailuo-02', prompt: 'a corgi' },
];

describe.skipIf(testDialect() === 'postgres')('the embedded simulator’s tasks across a restart', () => {
  const dir = tempDir('mediagate-simtasks-');
  const configPath = join(dir.path, 'mediagate.yaml');
  const d = embeddedDefault({});
  writeFileSync(
    configPath,
    stringify({
      database: { url: 'sqlite:./data/mediagate.db' },
      // Long enough for every task to be open when the first process stops.
      simulator: { embedded: true, video_seconds: 8 },
      tasks: { poll_interval_ms: 100, tick_ms: 50 },
      channels: d.channels,
      models: d.models,
    }),
  );
  const running: GatewayProcess[] = [];
  afterAll(async () => {
    for (const g of running) await g.stop();
    dir.remove();
  });

  it('finishes after the restart the tasks that were open at shutdown', { timeout: 240_000 }, async () => {
    const first = await spawnGateway(configPath, {}, 90_000, dir.path);
    running.push(first);
    await eventually(() => /mg-[0-9A-Za-z]{40,}/.test(first.stdout()), 10_000, 'the first key');
    const key = /(mg-[0-9A-Za-z]{40,})/.exec(first.stdout())![1];
    const ids: string[] = [];
    for (const body of TASKS) {
      const created = await createTask(first.url, key, body);
      expect(created.status, JSON.stringify(created.body)).toBe(200);
      ids.push(created.body.data.task_id);
    }
    for (const id of ids) expect(isFinished((await readTask(first.url, key, id)).body.data)).toBe(false);
    await first.stop();
    expect(existsSync(join(dir.path, 'data', 'mediagate.db.simulator-tasks.json'))).toBe(true);
    const saved = JSON.parse(readFileSync(join(dir.path, 'data', 'mediagate.db.simulator-tasks.json'), 'utf8'));
    expect(Object.values(saved.parts).flat()).toHaveLength(TASKS.length);

    const second = await spawnGateway(configPath, {}, 90_000, dir.path);
    running.push(second);
    for (const [i, id] of ids.entries()) {
      const done = await waitForTask(second.url, key, id, isFinished, 30_000);
      expect(done.status, `${TASKS[i].model}: ${done.fail_reason}`).toBe('SUCCESS');
      // Its video downloads through the gateway from the restarted simulator.
      const video = await fetch(`${second.url}/v1/video/generations/${id}/content`, { headers: { authorization: `Bearer ${key}` } });
      expect(video.status, TASKS[i].model).toBe(200);
      expect(Buffer.from(await video.arrayBuffer()).subarray(4, 8).toString('latin1')).toBe('ftyp');
    }
    await second.stop();
  });
});

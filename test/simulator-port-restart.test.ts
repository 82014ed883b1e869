import { afterAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { tempDir } from './helpers/gateway.js';
import { spawnGateway, type GatewayProcess } from './helpers/gateway-process.js';
import { testDialect } from './helpers/databases.js';
import { createTask, eventually, waitForTask, isFinished } from './helpers/video.js';

// A finished task's video URL names the embedded simulator's port and carries its signature; after
// a restart the same simulator address (and secret) serves it still.

const simulatorUrl = (g: GatewayProcess) => /simulator: (http:\/\/[^\s)]+)/.exec(g.stdout())?.[1];

describe.skipIf(testDialect() === 'postgres')('the embedded simulator across a restart', () => {
  const dir = tempDir('mediagate-simport-');
  const configPath = join(dir.path, 'mediagate.yaml');
  writeFileSync(
    configPath,
    stringify({
      database: { url: 'sqlite:./data/mediagate.db' },
      simulator: { embedded: true, video_seconds: 0.3 },
      tasks: { poll_interval_ms: 50, tick_ms: 20 },
      channels: [{ name: 'sim', type: 'simulator', models: ['sim-video'] }],
      models: { 'sim-video': { kind: 'video', modes: ['text'], price: { per_million_tokens: 1 } } },
    }),
  );
  const running: GatewayProcess[] = [];
  afterAll(async () => {
    for (const g of running) await g.stop();
    dir.remove();
  });

  it('keeps its port and signing secret, so the video URL of a finished task still downloads', async () => {
    const first = await spawnGateway(configPath, {}, 25_000, dir.path);
    running.push(first);
    await eventually(() => /mg-[0-9A-Za-z]{40,}/.test(first.stdout()), 5000, 'the first key');
    const key = /(mg-[0-9A-Za-z]{40,})/.exec(first.stdout())![1];
    const created = await createTask(first.url, key, { model: 'sim-video', prompt: 'a corgi' });
    expect(created.status).toBe(200);
    const done = await waitForTask(first.url, key, created.body.data.task_id, isFinished);
    expect(done.status).toBe('SUCCESS');
    const videoUrl: string = done.fail_reason;
    expect((await fetch(videoUrl)).status).toBe(200);
    const before = simulatorUrl(first);
    await first.stop();

    const second = await spawnGateway(configPath, {}, 25_000, dir.path);
    running.push(second);
    expect(simulatorUrl(second)).toBe(before);
    const res = await fetch(videoUrl);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('video/mp4');
    expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(100);
    // The task as read after the restart still points at the same, working URL.
    const again = await waitForTask(second.url, key, created.body.data.task_id, isFinished);
    expect(new URL(again.fail_reason).origin).toBe(new URL(videoUrl).origin);
    await second.stop();
  });
});

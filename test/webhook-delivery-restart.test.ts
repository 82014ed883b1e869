import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { Webhook } from 'standardwebhooks';
import { tempDir } from './helpers/gateway.js';
import { freshDatabaseUrl } from './helpers/databases.js';
import { runCli, spawnGateway, type GatewayProcess } from './helpers/gateway-process.js';
import { startSimulator, type Simulator } from '../src/simulator/server.js';
import { SIMULATOR_MODELS } from '../src/config-file/defaults.js';
import { createTask, eventually } from './helpers/video.js';
import { startReceiver, webhookHeaders } from './helpers/webhook-receiver.js';

// The outbox survives a crash: a gateway SIGKILLed while a delivery waits for its retry leaves the
// row in the database, and the next process sends it — once, with the same webhook-id. The signing
// secret comes from `mediagate keys webhook-secret`, as an operator makes it.

describe('a webhook delivery across a gateway SIGKILL', () => {
  let sim: Simulator;
  const dir = tempDir('mediagate-webhook-restart-');
  const configPath = join(dir.path, 'mediagate.yaml');
  let db: Awaited<ReturnType<typeof freshDatabaseUrl>> | undefined;
  const gateways: GatewayProcess[] = [];

  beforeAll(async () => {
    // The provider runs outside the gateway process, so it outlives the kill.
    sim = await startSimulator({ videoSeconds: 0.3 });
    db = await freshDatabaseUrl();
    writeFileSync(
      configPath,
      stringify({
        server: { host: '127.0.0.1', port: 0 },
        database: { url: db.url },
        log: { level: 'warn' },
        tasks: { poll_interval_ms: 100, tick_ms: 50, lease_ms: 1000 },
        webhooks: { allow_insecure: true, retry_delays_s: [2, 0.1, 0.1], tick_ms: 50, lease_ms: 2000 },
        channels: [{ name: 'sim-ark', type: 'simulator', base_url: sim.url, api_key: 'sim-upstream-key', models: ['sim-video'] }],
        models: { 'sim-video': SIMULATOR_MODELS['sim-video'] },
      }),
    );
  });

  afterAll(async () => {
    for (const g of gateways) g.proc.kill('SIGKILL');
    await sim?.close();
    await db?.drop();
    dir.remove();
  });

  it('is delivered once by the next process, with the same webhook-id', async () => {
    const created = await runCli(configPath, ['keys', 'create', '--name', 'hooks', '--json']);
    expect(created.status).toBe(0);
    const { id, key } = JSON.parse(created.stdout.trim().split('\n').pop()!) as { id: string; key: string };
    const made = await runCli(configPath, ['keys', 'webhook-secret', id, '--json']);
    expect(made.status).toBe(0);
    const { secret } = JSON.parse(made.stdout.trim().split('\n').pop()!) as { secret: string };
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);

    const rx = await startReceiver([500]);
    try {
      const first = await spawnGateway(configPath);
      gateways.push(first);
      const task = await createTask(first.url, key, { model: 'sim-video', prompt: 'survive a crash', callback_url: rx.url });
      expect(task.status).toBe(200);
      // The first attempt was answered 500; the retry is due 2 s later. Kill the process in between.
      await eventually(() => rx.received.length === 1, 15_000, 'the first attempt');
      first.proc.kill('SIGKILL');
      await first.exited;

      const second = await spawnGateway(configPath);
      gateways.push(second);
      await eventually(() => rx.received.length >= 2, 15_000, 'the retry from the next process');
      // Nothing more arrives: the 2xx ended the delivery.
      await new Promise((r) => setTimeout(r, 1500));
      expect(rx.received.map((h) => h.answered)).toEqual([500, 200]);
      expect(rx.received[1].headers['webhook-id']).toBe(rx.received[0].headers['webhook-id']);
      const payload = new Webhook(secret).verify(rx.received[1].body, webhookHeaders(rx.received[1].headers)) as any;
      expect(payload.data.task_id).toBe(task.body.data.task_id);
      expect(payload.data.status).toBe('SUCCESS');
      await second.stop();
    } finally {
      await rx.close();
    }
  }, 120_000);
});

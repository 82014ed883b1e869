import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { tempDir } from './helpers/gateway.js';
import { freshDatabaseUrl } from './helpers/databases.js';
import { startSimulator, type Simulator } from '../src/simulator/server.js';
import { SIMULATOR_MODELS } from '../src/config-file/defaults.js';
import { createTask, eventually, isFinished, readTask, simVideoStats, waitForTask } from './helpers/video.js';

// A gateway process killed with SIGKILL mid-task loses nothing: the task lives in the database,
// and the next process's poller takes it over once the dead one's lease runs out.

const MAIN = join(__dirname, '..', 'dist', 'main.js');

interface Gateway {
  child: ChildProcess;
  url: string;
  exited: Promise<number | null>;
}

describe('a gateway killed mid-task', () => {
  let sim: Simulator;
  const dir = tempDir('mediagate-restart-');
  const configPath = join(dir.path, 'mediagate.yaml');
  const env: Record<string, string> = { ...(process.env as Record<string, string>), MEDIAGATE_CONFIG: configPath };
  for (const k of ['PORT', 'DATABASE_URL', 'REDIS_URL', 'LOG_LEVEL', 'OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'ARK_API_KEY']) delete env[k];
  const children: ChildProcess[] = [];
  let db: Awaited<ReturnType<typeof freshDatabaseUrl>> | undefined;

  beforeAll(async () => {
    // The provider runs outside the gateway process, so it outlives the kill.
    sim = await startSimulator({ videoSeconds: 2 });
    db = await freshDatabaseUrl();
    writeFileSync(
      configPath,
      stringify({
        server: { host: '127.0.0.1', port: 0 },
        database: { url: db.url },
        log: { level: 'warn' },
        tasks: { poll_interval_ms: 100, tick_ms: 50, lease_ms: 500 },
        channels: [{ name: 'sim-ark', type: 'simulator', base_url: sim.url, api_key: 'sim-upstream-key', models: ['sim-video'] }],
        models: { 'sim-video': SIMULATOR_MODELS['sim-video'] },
      }),
    );
  });

  afterAll(async () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await sim?.close();
    await db?.drop();
    dir.remove();
  });

  async function startGatewayProcess(): Promise<Gateway> {
    const child = spawn(process.execPath, [MAIN, 'serve'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    let stdout = '';
    child.stdout!.on('data', (c) => (stdout += String(c)));
    child.stderr!.on('data', () => {});
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const url = await eventually(async () => /mediagate listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout)?.[1], 20_000, 'the gateway to listen');
    return { child, url, exited };
  }

  it('brings the task to SUCCESS after a restart and settles it once', async () => {
    const created = await promisify(execFile)(process.execPath, [MAIN, 'keys', 'create', '--name', 'restart', '--credit', '10', '--json'], { env });
    const { key } = JSON.parse(created.stdout) as { id: string; key: string };

    const first = await startGatewayProcess();
    const task = await createTask(first.url, key, { model: 'sim-video', prompt: 'survive a crash' });
    expect(task.status).toBe(200);
    const taskId: string = task.body.data.task_id;
    // Kill once the first process has polled the task and it is still open at the provider.
    await eventually(async () => ((await simVideoStats(sim.url)).tasks[taskId]?.polls ?? 0) >= 1, 10_000, 'a first poll');
    const before = await readTask(first.url, key, taskId);
    expect(isFinished(before.body.data)).toBe(false);
    expect((await simVideoStats(sim.url)).tasks[taskId].status).not.toBe('succeeded');
    first.child.kill('SIGKILL');
    await first.exited;

    const second = await startGatewayProcess();
    const done = await waitForTask(second.url, key, taskId, isFinished, 20_000);
    expect(done.status).toBe('SUCCESS');
    expect(done.progress).toBe('100%');
    expect(done.fail_reason).toBe(done.data.content.video_url);
    expect(done.data.status).toBe('succeeded');

    // The key was charged exactly the task's tokens (sim-video: 1 micro-dollar per token).
    const list = await promisify(execFile)(process.execPath, [MAIN, 'keys', 'list', '--json'], { env });
    const [row] = JSON.parse(list.stdout) as { credit: number }[];
    expect(Math.round(row.credit * 1_000_000)).toBe(10_000_000 - done.data.usage.total_tokens);

    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  }, 120_000);
});

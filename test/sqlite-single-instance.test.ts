import { afterAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { tempDir } from './helpers/gateway.js';
import { MAIN, spawnGateway, type GatewayProcess } from './helpers/gateway-process.js';
import { testDialect } from './helpers/databases.js';

// One SQLite file serves one process: a second `serve` on it would run a second poller and
// simulator and fail the first one's video tasks. It refuses to start, saying why and what to do.

function serveUntilExit(configPath: string, cwd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, MEDIAGATE_CONFIG: configPath, PORT: '0', LOG_LEVEL: 'warn' };
  for (const k of ['DATABASE_URL', 'REDIS_URL', 'OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'ARK_API_KEY']) delete env[k];
  const child = spawn(process.execPath, [MAIN, 'serve'], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c) => (stdout += String(c)));
  child.stderr.on('data', (c) => (stderr += String(c)));
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  return new Promise((resolve) =>
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}

describe.skipIf(testDialect() === 'postgres')('one serving process per SQLite file', () => {
  const dir = tempDir('mediagate-lock-');
  const configPath = join(dir.path, 'mediagate.yaml');
  const lockPath = join(dir.path, 'data', 'mediagate.db.lock');
  writeFileSync(configPath, 'database: { url: "sqlite:./data/mediagate.db" }\nsimulator: { embedded: true }\nchannels: [{ name: sim, type: simulator, models: [sim-chat] }]\nmodels: { sim-chat: { kind: chat } }\n');
  const running: GatewayProcess[] = [];
  afterAll(async () => {
    for (const g of running) await g.stop();
    dir.remove();
  });

  it('refuses a second serve on the same file with the reason and the way out', async () => {
    const first = await spawnGateway(configPath, {}, 25_000, dir.path);
    running.push(first);
    expect(JSON.parse(readFileSync(lockPath, 'utf8'))).toMatchObject({ pid: first.proc.pid, host: hostname() });

    const second = await serveUntilExit(configPath, dir.path);
    expect(second.code).toBe(1);
    expect(second.stdout).not.toContain('listening');
    expect(second.stderr).toContain(`pid ${first.proc.pid}`);
    expect(second.stderr).toContain('PostgreSQL');
    expect(second.stderr).toContain('mediagate.db');
    // The first one still answers.
    expect((await fetch(`${first.url}/readyz`)).status).toBe(200);

    await first.stop();
    expect(existsSync(lockPath)).toBe(false);
    const third = await spawnGateway(configPath, {}, 25_000, dir.path);
    running.push(third);
    await third.stop();
    // Three processes start here one after another, each up to 25 s on a loaded machine.
  }, 120_000);

  it('takes over a lock whose process is gone', async () => {
    // A pid that cannot be running: the previous owner died without removing its lock (SIGKILL).
    writeFileSync(lockPath, JSON.stringify({ pid: 2 ** 22 + 7, host: hostname(), started: '2026-01-01T00:00:00.000Z' }));
    const g = await spawnGateway(configPath, {}, 25_000, dir.path);
    running.push(g);
    expect(JSON.parse(readFileSync(lockPath, 'utf8')).pid).toBe(g.proc.pid);
    await g.stop();
  }, 60_000);
});

import { describe, expect, it } from 'vitest';
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from './helpers/gateway.js';
import { eventually } from './helpers/eventually.js';

const run = promisify(execFile);
const MAIN = join(__dirname, '..', 'dist', 'main.js');

const waitFor = (predicate: () => boolean, ms: number) => eventually(predicate, ms, 'the gateway to print its banner');

describe('serve with the embedded default', () => {
  it('prints a key and two lines (the docs’ variables, a curl) that return the model list, and stops cleanly on SIGTERM', async () => {
    const dir = tempDir();
    const env: Record<string, string> = { ...(process.env as Record<string, string>), PORT: '0', LOG_LEVEL: 'warn' };
    for (const k of ['MEDIAGATE_CONFIG', 'OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'ARK_API_KEY', 'DATABASE_URL', 'REDIS_URL']) delete env[k];
    const child = spawn(process.execPath, [MAIN], { cwd: dir.path, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.on('data', (c) => (stdout += String(c)));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      await waitFor(() => /\n {2}curl -s .*\n/.test(stdout), 20000);
      const [, exports, url, curl] = /\n {2}(export MEDIAGATE_URL=(\S+) MEDIAGATE_KEY=mg-[0-9A-Za-z]+)\n {2}(curl -s .*)\n/.exec(stdout)!;
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(existsSync(join(dir.path, 'data', 'mediagate.db'))).toBe(true);
      // The two printed lines, run as printed.
      const env: NodeJS.ProcessEnv = { ...process.env };
      delete env.MEDIAGATE_URL;
      delete env.MEDIAGATE_KEY;
      const { stdout: answer } = await run('bash', ['-euc', `${exports}\n${curl}`], { env });
      const body = JSON.parse(answer) as any;
      expect(body.object).toBe('list');
      expect(body.success).toBe(true);
      expect(body.data.map((m: any) => m.id)).toContain('doubao-seedance-1-0-pro-250528');
      const base = url;
      expect((await fetch(`${base}/healthz`)).status).toBe(200);
      expect((await fetch(`${base}/readyz`)).status).toBe(200);
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      dir.remove();
    }
  });

  it('does not print a new key when one exists', async () => {
    const dir = tempDir();
    const env: Record<string, string> = { ...(process.env as Record<string, string>), PORT: '0', LOG_LEVEL: 'warn' };
    delete env.MEDIAGATE_CONFIG;
    try {
      for (const expectKey of [true, false]) {
        const child = spawn(process.execPath, [MAIN, 'serve'], { cwd: dir.path, env, stdio: ['ignore', 'pipe', 'pipe'] });
        let stdout = '';
        child.stdout.on('data', (c) => (stdout += String(c)));
        const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
        await waitFor(() => stdout.includes('mediagate listening on'), 20000);
        await new Promise((r) => setTimeout(r, 200));
        expect(/mg-[0-9A-Za-z]{40,}/.test(stdout)).toBe(expectKey);
        child.kill('SIGINT');
        expect(await exited).toBe(0);
      }
    } finally {
      dir.remove();
    }
  });
});

import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { tempDir } from './helpers/gateway.js';
import { MAIN } from './helpers/gateway-process.js';
import { eventually } from './helpers/eventually.js';

// What `npm start` prints to the operator is plain text, at the default log level too: the banner
// and the shutdown notice, with no JSON log line mixed in (docs/deployment.md, "Output").

describe('serve output', () => {
  it('prints the banner and the shutdown notice as plain lines, no JSON among them', async () => {
    const dir = tempDir();
    const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0' };
    for (const k of ['MEDIAGATE_CONFIG', 'LOG_LEVEL', 'OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'ARK_API_KEY', 'DATABASE_URL', 'REDIS_URL']) delete env[k];
    const child = spawn(process.execPath, [MAIN, 'serve'], { cwd: dir.path, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.on('data', (c) => (stdout += String(c)));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      await eventually(() => stdout.includes('curl -s'), 20_000, 'the banner');
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      const lines = stdout.trim().split('\n');
      expect(lines[0]).toMatch(/^mediagate listening on http:\/\/127\.0\.0\.1:\d+ \(config: embedded default; database: sqlite; simulator: http:\/\/127\.0\.0\.1:\d+\)$/);
      expect(lines.at(-1)).toMatch(/^mediagate: SIGTERM: shutting down/);
      expect(lines.filter((l) => l.trimStart().startsWith('{'))).toEqual([]);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      dir.remove();
    }
  });
});

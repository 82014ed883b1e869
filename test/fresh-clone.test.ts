import { afterAll, describe, expect, it } from 'vitest';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from './helpers/gateway.js';
import { testDialect } from './helpers/databases.js';
import { eventually } from './helpers/eventually.js';
import { ROOT, docShell, shBlocks, type DocBlock } from './helpers/doc-blocks.js';

// A newcomer's first hour from a fresh clone: `git clone`, then docs/console.md and docs/video.md
// followed verbatim, every ```sh block in order, with no config file written. The blocks marked
// `server` (npm start with an environment override) run in the background as the reader's second
// terminal, one at a time: starting the next one stops the previous (Ctrl-C). MEDIAGATE_URL and
// MEDIAGATE_KEY are what npm start printed (README, "Quick start"). The aim: the admin API answers
// the documented admin token and the console page loads; a webhook reaches a receiver on this
// machine. node_modules is the checkout's (npm ci is checked by CI), and so is the compiled dist/
// (the first npm start would compile it; other tests cover that); `npx mediagate` is the real npx.

// The embedded default runs on SQLite whatever the test project: once is enough.
describe.skipIf(testDialect() === 'postgres')('fresh clone: docs/console.md and docs/video.md, verbatim', { timeout: 10 * 60_000 }, () => {
  const dir = tempDir('mediagate-clone-');
  const clone = join(dir.path, 'mediagate');
  let server: ChildProcess | undefined;
  let printed = '';

  afterAll(async () => {
    await stop();
    dir.remove();
  }, 60_000);

  async function stop(): Promise<void> {
    if (!server || server.exitCode !== null || server.signalCode !== null) return;
    const exited = new Promise((r) => server!.once('exit', r));
    // Ctrl-C: the whole foreground process group (npm, its shell, node).
    process.kill(-server.pid!, 'SIGINT');
    await exited;
    // npm exits before the gateway under it has drained: wait until the whole group is gone.
    const group = server.pid!;
    await eventually(() => {
      try {
        process.kill(-group, 0);
        return false;
      } catch {
        return true;
      }
    }, 30_000, 'the stopped gateway to exit');
  }

  /** A `server` block in the background (PORT=0: the test's stand-in for a free 8080); resolves with the address it printed. */
  async function start(block: DocBlock, env: NodeJS.ProcessEnv): Promise<string> {
    await stop();
    printed = '';
    server = spawn('bash', ['-c', block.code], { cwd: clone, env: { ...env, PORT: '0' }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    server.stdout!.on('data', (c) => (printed += String(c)));
    server.stderr!.on('data', (c) => (printed += String(c)));
    const m = await eventually(() => /mediagate listening on (http:\/\/\S+)/.exec(printed), 120_000, `${block.file}:${block.line} to start (${printed})`);
    // The first start (no key yet) prints the key and the line to paste after the address.
    if (!env.MEDIAGATE_KEY) await eventually(() => /export MEDIAGATE_URL=/.test(printed), 30_000, `the line to paste (${printed})`);
    return m[1];
  }

  it('reaches the console with an admin token, then a delivered local webhook', async () => {
    execFileSync('git', ['clone', '--quiet', ROOT, clone]);
    symlinkSync(join(ROOT, 'node_modules'), join(clone, 'node_modules'));
    cpSync(join(ROOT, 'dist'), join(clone, 'dist'), { recursive: true });
    const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'warn' };
    for (const k of ['MEDIAGATE_CONFIG', 'DATABASE_URL', 'REDIS_URL', 'PORT', 'HOST', 'MEDIAGATE_URL', 'MEDIAGATE_KEY', 'MEDIAGATE_ADMIN_ENABLED', 'MEDIAGATE_WEBHOOKS_ALLOW_INSECURE']) delete env[k];
    for (const k of Object.keys(env)) if (/_API_KEY$|_ACCESS_KEY$|_SECRET_KEY$/.test(k)) delete env[k];
    const shell = await docShell(clone, env);

    const follow = async (file: string, after: (block: DocBlock, stdout: string) => Promise<void> = async () => {}) => {
      const blocks = shBlocks(file, clone);
      expect(blocks.some((b) => b.mark.kind === 'server'), `${file} says how to start the gateway`).toBe(true);
      for (const block of blocks) {
        if (block.mark.kind === 'skip' || block.mark.kind === 'env') continue;
        if (block.mark.kind === 'server') {
          const url = await start(block, shell.env);
          // The first start printed the key and the line to paste; a later one keeps the key.
          const key = /export MEDIAGATE_URL=\S+ MEDIAGATE_KEY=(mg-\S+)/.exec(printed)?.[1] ?? shell.env.MEDIAGATE_KEY;
          expect(key, 'the key npm start printed').toBeTruthy();
          shell.env = { ...shell.env, MEDIAGATE_URL: url.replace('://0.0.0.0', '://127.0.0.1'), MEDIAGATE_KEY: key };
          continue;
        }
        const r = await shell.run(block);
        await after(block, r.stdout);
      }
    };

    let adminAnswered = false;
    await follow('docs/console.md', async (_block, stdout) => {
      if (/"data":\[\{"id":"key_/.test(stdout)) adminAnswered = true;
    });
    expect(adminAnswered, 'the admin API answered the admin token from docs/console.md').toBe(true);
    const page = await fetch(`${shell.env.MEDIAGATE_URL}/console`, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(await page.text()).toMatch(/<html/i);

    // docs/video.md's webhook example waits for the delivery itself; reaching its end is the proof.
    await follow('docs/video.md').catch((err: Error) => {
      throw new Error(`${err.message}\n--- the gateway printed\n${printed.slice(-3000)}`);
    });
    await stop();
  });
});

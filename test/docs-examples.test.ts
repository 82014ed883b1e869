import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from './helpers/gateway.js';
import { testDialect } from './helpers/databases.js';
import { MAIN } from './helpers/gateway-process.js';
import { eventually } from './helpers/eventually.js';
import { ROOT, conventionProblems, docFiles, docShell, shBlocks } from './helpers/doc-blocks.js';

// Docs as tests: every ```sh block of README.md and docs/*.md runs verbatim (bash, set -euo
// pipefail) against one gateway on the embedded default, started here on port 0, with
// MEDIAGATE_URL and MEDIAGATE_KEY set as the quick start sets them. The blocks of one file run in
// order, in one working folder, and shell variables a block sets (TASK=…) carry over to the next
// blocks of that file, as in a terminal. A failure names the doc file and the line of the block.
// Every curl runs with --fail-with-body, so an error answer fails its example. The markers that
// exempt a block are described in test/helpers/doc-blocks.ts.

const blocks = docFiles().flatMap((f) => shBlocks(f));

describe('docs: the shell examples follow the conventions', () => {
  it('use $MEDIAGATE_URL and $MEDIAGATE_KEY, a Content-Type on every curl with a body, no hard-coded ids, npx mediagate', () => {
    expect(blocks.length).toBeGreaterThan(10);
    expect(blocks.flatMap(conventionProblems)).toEqual([]);
  });
});

// The embedded default runs on SQLite whatever the test project: once is enough.
describe.skipIf(testDialect() === 'postgres')('docs: every shell example runs as written', { timeout: 30 * 60_000 }, () => {
  const dir = tempDir('mediagate-docs-');
  let gateway: ChildProcess;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    // The embedded default with short simulated videos, so the examples that wait for one are quick.
    const config = join(dir.path, 'mediagate.yaml');
    writeFileSync(config, 'extends: embedded\nsimulator: { video_seconds: 2 }\ntasks: { poll_interval_ms: 200, tick_ms: 50 }\nwebhooks: { retry_delays_s: [0.2, 0.5, 1] }\n');
    // `npx mediagate …` runs this checkout's CLI directly: npx itself would add seconds to every
    // call (the fresh-clone check runs the real npx).
    const bin = join(dir.path, 'bin');
    mkdirSync(bin);
    const npx = execFileSync('bash', ['-c', 'command -v npx'], { encoding: 'utf8' }).trim();
    writeFileSync(join(bin, 'npx'), `#!/usr/bin/env bash\nif [ "\${1:-}" = mediagate ]; then shift; exec node ${JSON.stringify(MAIN)} "$@"; fi\nexec ${JSON.stringify(npx)} "$@"\n`);
    chmodSync(join(bin, 'npx'), 0o755);
    symlinkSync(join(ROOT, 'node_modules'), join(dir.path, 'node_modules'));
    const base: NodeJS.ProcessEnv = { ...process.env, MEDIAGATE_CONFIG: config, MEDIAGATE_ADMIN_ENABLED: 'true', MEDIAGATE_WEBHOOKS_ALLOW_INSECURE: 'true', LOG_LEVEL: 'warn' };
    for (const k of ['DATABASE_URL', 'REDIS_URL', 'PORT', 'HOST', 'MEDIAGATE_URL', 'MEDIAGATE_KEY', 'OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'ARK_API_KEY', 'GEMINI_API_KEY', 'KLING_ACCESS_KEY', 'DASHSCOPE_API_KEY', 'MINIMAX_API_KEY']) delete base[k];
    gateway = spawn(process.execPath, [MAIN, 'serve', '--port', '0'], { cwd: dir.path, env: base, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    gateway.stdout!.on('data', (c) => (out += String(c)));
    gateway.stderr!.on('data', (c) => (out += String(c)));
    const m = await eventually(() => /export MEDIAGATE_URL=(\S+) MEDIAGATE_KEY=(\S+)/.exec(out), 60_000, `the gateway's banner (${out})`);
    env = { ...base, MEDIAGATE_URL: m[1], MEDIAGATE_KEY: m[2], PATH: `${bin}:${process.env.PATH}` };
  }, 90_000);

  afterAll(async () => {
    if (gateway && gateway.exitCode === null) {
      const exited = new Promise((r) => gateway.once('exit', r));
      gateway.kill('SIGTERM');
      await exited;
    }
    dir.remove();
  });

  for (const file of docFiles()) {
    const runnable = blocks.filter((b) => b.file === file && b.mark.kind === 'run');
    if (!runnable.length) continue;
    it(`${file}: ${runnable.length} example(s)`, async () => {
      const work = join(dir.path, file.replace(/\W/g, '_'));
      mkdirSync(work);
      // The examples run where a reader runs them, in a checkout: the repository's example files are there.
      symlinkSync(join(ROOT, 'examples'), join(work, 'examples'));
      const shell = await docShell(work, env);
      for (const block of runnable) await shell.run(block);
    });
  }
});

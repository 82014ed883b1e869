import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

// What `mediagate serve` loads up front: the simulator's code (fake providers, sample video) only
// when it runs — an embedded simulator or `mediagate simulate` (docs/benchmarks.md, "Memory").
// Reads the build (dist/), as `npm start` runs it.

describe('the modules the serving code loads at start', () => {
  it('does not include the simulator', () => {
    // Every module `dist/main.js` imports up front, in a fresh process: ES modules through a loader
    // hook, CommonJS ones from require.cache.
    const root = join(__dirname, '..', '..');
    const script = `
      import { createRequire, register } from 'node:module';
      import { MessageChannel } from 'node:worker_threads';
      const { port1, port2 } = new MessageChannel();
      const loaded = [];
      port1.on('message', (u) => loaded.push(u));
      port1.unref();
      register('data:text/javascript,' + encodeURIComponent('let p; export function initialize(d) { p = d.port; } export async function load(u, c, n) { p.postMessage(u); return n(u, c); }'), { data: { port: port2 }, transferList: [port2] });
      await import(${JSON.stringify(join(root, 'dist', 'main.js'))});
      await new Promise((r) => setTimeout(r, 200));
      const cjs = Object.keys(createRequire(import.meta.url).cache);
      process.stdout.write(JSON.stringify([...loaded, ...cjs]));
    `;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: root, encoding: 'utf8' });
    const files: string[] = JSON.parse(out);
    // The serving code itself was loaded (the hook saw it) …
    expect(files.some((f) => f.includes('/dist/upstream/client.js'))).toBe(true);
    expect(files.some((f) => f.includes('/dist/app.js'))).toBe(true);
    // … and nothing of the simulator.
    expect(files.filter((f) => f.includes('/dist/simulator/'))).toEqual([]);
  });
});

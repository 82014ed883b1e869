// Compiles src/ to dist/ when dist/ is missing or older than a source file. Shared by the CLI entry
// (bin/mediagate.mjs) and the benchmarks (bench/run.mjs).
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { copyAssets } from './copy-assets.mjs';

function newestSource(dir) {
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    newest = Math.max(newest, e.isDirectory() ? newestSource(p) : statSync(p).mtimeMs);
  }
  return newest;
}

/** Returns the path of dist/main.js; `say` reports what happens. Throws when nothing was emitted. */
export function ensureBuilt(root, say) {
  const entry = join(root, 'dist', 'main.js');
  // An incremental build leaves unchanged outputs untouched, so a stamp written after each build,
  // not the entry point's own time, says when dist/ was last brought up to date.
  const stamp = join(root, 'dist', '.build-stamp');
  if (existsSync(entry) && existsSync(stamp) && statSync(stamp).mtimeMs >= newestSource(join(root, 'src'))) return entry;
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  say('compiling src/ to dist/ …');
  try {
    execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
  } catch {
    // tsc still emits on type errors; only a missing entry point is fatal.
    if (!existsSync(entry)) throw new Error('the build produced no dist/main.js');
    say('the compiler reported errors; using what it emitted');
    copyAssets(root);
    return entry;
  }
  copyAssets(root);
  writeFileSync(stamp, `${new Date().toISOString()}\n`);
  return entry;
}

/**
 * Builds the web console (src/console, Vite) into dist/console-web when it is missing or older
 * than a console source file. Returns the folder; `say` reports what happens.
 */
export function ensureConsoleBuilt(root, say) {
  const out = join(root, 'dist', 'console-web');
  const index = join(out, 'index.html');
  if (existsSync(index) && statSync(index).mtimeMs >= newestSource(join(root, 'src', 'console'))) return out;
  say('building the web console …');
  const vite = join(dirname(createRequire(import.meta.url).resolve('vite/package.json')), 'bin', 'vite.js');
  execFileSync(process.execPath, [vite, 'build', '--config', join(root, 'src', 'console', 'vite.config.mjs')], { stdio: 'inherit', cwd: root });
  return out;
}

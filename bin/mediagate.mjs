#!/usr/bin/env node
// Entry point of `npm start` and `npx mediagate`: compiles src/ to dist/ when dist/ is missing
// or older than a source file, then runs the CLI.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const entry = join(root, 'dist', 'main.js');

function newestSource(dir) {
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    newest = Math.max(newest, e.isDirectory() ? newestSource(p) : statSync(p).mtimeMs);
  }
  return newest;
}

if (!existsSync(entry) || statSync(entry).mtimeMs < newestSource(join(root, 'src'))) {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  process.stderr.write('mediagate: compiling…\n');
  try {
    execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
  } catch {
    // tsc still emits on type errors; only a missing entry point is fatal.
    if (!existsSync(entry)) process.exit(1);
    process.stderr.write('mediagate: the compiler reported errors; running what it emitted\n');
  }
}

const { main } = await import(pathToFileURL(entry).href);
const code = await main(process.argv.slice(2));
if (code >= 0) process.exit(code);

// Copies the non-TypeScript files the compiled code reads at run time (the provider manifests,
// src/providers/**/*.yaml) from src/ to dist/, where tsc does not put them. Used by
// ensure-built.mjs, `npm run build` and the test suite's global setup.
import { copyFileSync, mkdirSync, readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

function* assets(dir) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) yield* assets(p);
    else if (e.name.endsWith('.yaml')) yield p;
  }
}

/** Copies every asset under src/providers into the same place under dist/providers. */
export function copyAssets(root) {
  const src = join(root, 'src', 'providers');
  for (const file of assets(src)) {
    const to = join(root, 'dist', 'providers', relative(src, file));
    mkdirSync(dirname(to), { recursive: true });
    copyFileSync(file, to);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) copyAssets(join(dirname(fileURLToPath(import.meta.url)), '..'));

import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { dirname, join } from 'node:path';

// Tests that start the CLI as a child process run the compiled dist/; build it once up front.
// Type errors do not stop the emit (type-checking is `npm run build`'s job), so they are not fatal here.
export default async function setup(): Promise<void> {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  try {
    execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'pipe', cwd: root });
  } catch (err) {
    const out = String((err as { stdout?: Buffer }).stdout ?? '');
    process.stderr.write(`global-setup: tsc reported errors (dist/ emitted anyway):\n${out.slice(0, 2000)}\n`);
  }
  // The provider manifests the compiled code reads are YAML files tsc does not copy.
  const { copyAssets } = (await import(pathToFileURL(join(root, 'bin', 'copy-assets.mjs')).href)) as { copyAssets: (root: string) => void };
  copyAssets(root);
  // The browser tests load the web console the gateway serves from dist/console-web.
  const { ensureConsoleBuilt } = (await import(pathToFileURL(join(root, 'bin', 'ensure-built.mjs')).href)) as { ensureConsoleBuilt: (root: string, say: (m: string) => void) => string };
  ensureConsoleBuilt(root, () => undefined);
}

import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

// Tests that start the CLI as a child process run the compiled dist/; build it once up front.
export default function setup(): void {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit', cwd: root });
}

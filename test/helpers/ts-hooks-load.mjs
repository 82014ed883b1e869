import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// Module hooks (registered by ts-hooks.mjs): `./x.js` that is missing resolves to `./x.ts`, and a
// `.ts` file loads as its JavaScript with the types stripped by TypeScript's own transpiler. The
// output is kept by content hash, so TypeScript is loaded only for a source not seen before.

const cacheDir = join(tmpdir(), 'mediagate-ts-hooks');

export async function resolve(specifier, context, nextResolve) {
  try {
    return await nextResolve(specifier, context);
  } catch (err) {
    // A worker's entry (a file URL) or an import inside a `.ts` module.
    const fromSource = specifier.startsWith('file:') || context.parentURL?.endsWith('.ts');
    if (err?.code !== 'ERR_MODULE_NOT_FOUND' || !specifier.endsWith('.js') || !fromSource) throw err;
    return nextResolve(`${specifier.slice(0, -3)}.ts`, context);
  }
}

export async function load(url, context, nextLoad) {
  if (!url.startsWith('file:') || !url.endsWith('.ts')) return nextLoad(url, context);
  const source = readFileSync(fileURLToPath(url), 'utf8');
  const cached = join(cacheDir, `${createHash('sha256').update(source).digest('hex')}.js`);
  let code;
  try {
    code = readFileSync(cached, 'utf8');
  } catch {
    const { default: ts } = await import('typescript');
    code = ts.transpileModule(source, { fileName: fileURLToPath(url), compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, sourceMap: false } }).outputText;
    // Written aside and renamed: a process reading the cache meanwhile never sees half a file.
    mkdirSync(cacheDir, { recursive: true });
    const aside = `${cached}.${process.pid}.${Math.random().toString(36).slice(2)}`;
    writeFileSync(aside, code);
    renameSync(aside, cached);
  }
  return { format: 'module', source: code, shortCircuit: true };
}

#!/usr/bin/env node
// Entry point of `npm start` and `npx mediagate`: compiles src/ to dist/ when needed, then runs the CLI.
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ensureBuilt } from './ensure-built.mjs';

let entry;
try {
  entry = ensureBuilt(join(dirname(fileURLToPath(import.meta.url)), '..'), (m) => process.stderr.write(`mediagate: ${m}\n`));
} catch (err) {
  process.stderr.write(`mediagate: ${err.message}\n`);
  process.exit(1);
}
const { main } = await import(pathToFileURL(entry).href);
const code = await main(process.argv.slice(2));
if (code >= 0) process.exit(code);

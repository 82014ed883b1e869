#!/usr/bin/env node
// Entry point of `npm start` and `npx mediagate`: compiles src/ to dist/ when needed, then runs the CLI.
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ensureBuilt, ensureConsoleBuilt } from './ensure-built.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const say = (m) => process.stderr.write(`mediagate: ${m}\n`);
let entry;
try {
  entry = ensureBuilt(root, say);
} catch (err) {
  say(err.message);
  process.exit(1);
}
// The server serves the web console from dist/console-web; other commands do not need it.
const args = process.argv.slice(2);
const serving = args[0] === undefined || args[0] === 'serve' || (args[0].startsWith('-') && !['-h', '--help', '-v', '--version'].includes(args[0]));
if (serving && !args.includes('--help') && !args.includes('-h')) {
  try {
    ensureConsoleBuilt(root, say);
  } catch (err) {
    say(`the web console could not be built (${err.message}); the gateway runs without it`);
  }
}
const { main } = await import(pathToFileURL(entry).href);
const code = await main(process.argv.slice(2));
if (code >= 0) process.exit(code);

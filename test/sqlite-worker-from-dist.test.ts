import { describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { MAIN } from './helpers/gateway-process.js';
import { tempDir } from './helpers/gateway.js';
import { testDialect } from './helpers/databases.js';

// The SQLite background worker is a module of its own (src/store/sqlite-worker.ts), started from
// its compiled file beside the store. Run from dist/ in a plain node process (no test hooks), its
// thread must start and checkpoint the WAL into the database file, as the server does.
// A probe file of its own (not -e with --input-type, which a worker thread would inherit and refuse).
const PROBE = `
import { statSync } from 'node:fs';
const { openStore } = await import(process.argv[2]);
const path = process.argv[3];
const store = await openStore('sqlite:' + path);
await store.db.schema.createTable('filler').addColumn('v', 'text').execute();
const before = statSync(path).size;
for (let i = 0; i < 200; i++) await store.db.insertInto('filler').values({ v: 'x'.repeat(8000) }).execute();
const until = Date.now() + 20000;
while (statSync(path).size < before + 1000000 && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
const grown = statSync(path).size - before;
await store.close();
process.stdout.write(JSON.stringify({ grown }));
`;

describe.skipIf(testDialect() !== 'sqlite')('the SQLite worker from the build', () => {
  it('starts from dist/ without test hooks and checkpoints written pages into the database file', async () => {
    const dir = tempDir();
    try {
      const db = pathToFileURL(join(dirname(MAIN), 'store', 'db.js')).href;
      const probe = join(dir.path, 'probe.mjs');
      writeFileSync(probe, PROBE);
      const { stdout, stderr } = await promisify(execFile)(process.execPath, [probe, db, join(dir.path, 'w.db')], { env: { ...process.env, NODE_OPTIONS: '' }, timeout: 60_000 });
      expect(stderr).toBe('');
      expect(JSON.parse(stdout).grown).toBeGreaterThan(1_000_000);
    } finally {
      dir.remove();
    }
  }, 90_000);
});

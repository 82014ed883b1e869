import { describe, expect, it } from 'vitest';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import { openStore } from '../src/store/db.js';
import { tempDir } from './helpers/gateway.js';
import { testDialect } from './helpers/databases.js';

describe.skipIf(testDialect() !== 'sqlite')('SQLite WAL checkpoints off the event loop', () => {
  it('moves written pages into the database file from a worker thread', async () => {
    const dir = tempDir();
    const path = join(dir.path, 'cp.db');
    const store = await openStore(`sqlite:${path}`);
    try {
      await sql`create table filler (v text)`.execute(store.db);
      const before = statSync(path).size;
      for (let i = 0; i < 200; i++) await sql`insert into filler values (${'x'.repeat(8000)})`.execute(store.db);
      // The gateway's own connection never checkpoints (wal_autocheckpoint = 0), so only the
      // worker can grow the main file.
      const until = Date.now() + 10_000;
      while (statSync(path).size < before + 1_000_000 && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
      expect(statSync(path).size).toBeGreaterThan(before + 1_000_000);
      const [{ wal_autocheckpoint }] = (await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(store.db)).rows;
      expect(wal_autocheckpoint).toBe(0);
    } finally {
      await store.close();
      dir.remove();
    }
  });
});

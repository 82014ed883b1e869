import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** Which database the store-touching suites run on: `sqlite` (default) or `postgres`. */
export function testDialect(): 'sqlite' | 'postgres' {
  return process.env.MEDIAGATE_TEST_DB === 'postgres' ? 'postgres' : 'sqlite';
}

export const PG_ADMIN_URL = process.env.MEDIAGATE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** A fresh, empty database of the test dialect and a function that removes it. */
export async function freshDatabaseUrl(dialect = testDialect()): Promise<{ url: string; drop(): Promise<void> }> {
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'mediagate-db-'));
    return { url: `sqlite:${join(dir, 'test.db')}`, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const name = `mg_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: PG_ADMIN_URL });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}

import Database from 'better-sqlite3';
import pg from 'pg';
import { Kysely, Migrator, PostgresDialect, SqliteDialect } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { migrateToLatest, migrations } from '../src/store/migrations.js';
import { parseDatabaseUrl } from '../src/store/db.js';
import { freshDatabaseUrl, testDialect } from './helpers/databases.js';

// Tasks stored before public ids were split from upstream ids keep working: the migration gives
// each existing row its own task_id as upstream_id, on SQLite and on PostgreSQL.

describe('migration 0002: upstream_id for existing tasks', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c();
  });

  it('carries existing rows: upstream_id = task_id, billing empty', async () => {
    const dialect = testDialect();
    const fresh = await freshDatabaseUrl();
    cleanups.push(fresh.drop);
    const { target } = parseDatabaseUrl(fresh.url);
    const db = new Kysely<any>({
      dialect: dialect === 'postgres' ? new PostgresDialect({ pool: new pg.Pool({ connectionString: target, max: 1 }) }) : new SqliteDialect({ database: new Database(target) }),
    });
    cleanups.push(() => db.destroy());

    const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations(dialect) } });
    const first = await migrator.migrateTo('0001_initial');
    expect(first.error).toBeUndefined();
    const now = Date.now();
    await db
      .insertInto('tasks')
      .values({
        task_id: 'cgt-20250101000000-older', key_id: 'k', model: 'sim-video', channel: 'simulator', upstream_model: 'sim-video', action: 'textGenerate',
        status: 'IN_PROGRESS', fail_reason: '', submit_time: 1, start_time: 1, finish_time: 0, progress: '10%', data: '{}', reservation_id: null,
        estimated_units: 5, next_poll_at: now, lease_owner: null, lease_until: 0, poll_failures: 0, deadline_at: now, url_expires_at: 0, updated_at: now,
      })
      .execute();

    expect(await migrateToLatest(db, dialect)).toContain('0002_task_upstream_id');
    const row = await db.selectFrom('tasks').selectAll().executeTakeFirstOrThrow();
    expect(row.upstream_id).toBe('cgt-20250101000000-older');
    expect(row.billing).toBe('');
  });
});

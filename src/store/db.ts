import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import type { Database } from './schema.js';
import { migrateToLatest } from './migrations.js';
import { startCheckpointer, type Checkpointer } from './checkpointer.js';

export type Dialect = 'sqlite' | 'postgres';

export interface Store {
  db: Kysely<Database>;
  dialect: Dialect;
  /** true when the database answers a trivial query */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

/** Accepts `sqlite:<path>`, `sqlite::memory:`, `postgres://…` and `postgresql://…`. */
export function parseDatabaseUrl(url: string): { dialect: Dialect; target: string } {
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) return { dialect: 'postgres', target: url };
  if (url.startsWith('sqlite:')) {
    const target = url.slice('sqlite:'.length).replace(/^\/\//, '');
    if (!target) throw new Error('database.url: sqlite: needs a path, e.g. sqlite:./data/mediagate.db');
    return { dialect: 'sqlite', target };
  }
  throw new Error(`database.url: unsupported scheme (use sqlite:<path> or postgres://…)`);
}

type SqliteConnection = import('better-sqlite3').Database;

/**
 * Kysely prepares every query anew; on SQLite preparing costs as much as running. The gateway
 * issues a small, fixed set of SQL texts, so prepared statements are kept by text and reused
 * (better-sqlite3 statements are synchronous, so one statement is never used twice at once).
 */
function withStatementCache(conn: SqliteConnection, max = 512): SqliteConnection {
  const cache = new Map<string, ReturnType<SqliteConnection['prepare']>>();
  return new Proxy(conn, {
    get(target, prop, receiver) {
      if (prop !== 'prepare') {
        const v = Reflect.get(target, prop, receiver) as unknown;
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      }
      return (sqlText: string) => {
        let stmt = cache.get(sqlText);
        if (!stmt) {
          // Queries with literal values inlined (rare) would grow the cache without bound.
          if (cache.size >= max) cache.clear();
          stmt = target.prepare(sqlText);
          cache.set(sqlText, stmt);
        }
        return stmt;
      };
    },
  });
}

export async function openStore(url: string, opts: { migrate?: boolean; poolSize?: number; backgroundCheckpoints?: boolean } = {}): Promise<Store> {
  const { dialect, target } = parseDatabaseUrl(url);
  let db: Kysely<Database>;
  let checkpointer: Checkpointer | null = null;
  if (dialect === 'sqlite') {
    const { default: BetterSqlite } = await import('better-sqlite3');
    if (target !== ':memory:') mkdirSync(dirname(target), { recursive: true });
    const conn = new BetterSqlite(target);
    conn.pragma('journal_mode = WAL');
    conn.pragma('synchronous = NORMAL');
    conn.pragma('busy_timeout = 5000');
    if (target !== ':memory:' && opts.backgroundCheckpoints !== false) {
      conn.pragma('wal_autocheckpoint = 0');
      checkpointer = startCheckpointer(target, 1000, (m) => process.stderr.write(`mediagate: ${m}\n`));
    }
    // Integers above 2^53 never occur in our columns (ms timestamps, micro-dollars).
    db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(conn) }) });
  } else {
    const pg = await import('pg');
    const Pool = pg.default.Pool;
    // int8 (bigint) columns hold ms timestamps and micro-dollars, all well inside 2^53.
    pg.default.types.setTypeParser(20, (v: string) => Number(v));
    const pool = new Pool({ connectionString: target, max: opts.poolSize ?? 10 });
    // A dropped idle connection must not crash the process.
    pool.on('error', () => {});
    db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  }
  if (opts.migrate !== false) await migrateToLatest(db, dialect);
  return {
    db,
    dialect,
    async ping() {
      try {
        await sql`select 1`.execute(db);
        return true;
      } catch {
        return false;
      }
    },
    async close() {
      await db.destroy();
      await checkpointer?.stop();
    },
  };
}

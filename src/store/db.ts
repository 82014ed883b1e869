import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { CompiledQuery, Kysely, PostgresDialect, SqliteDialect, sql, type QueryResult } from 'kysely';
import type { Database } from './schema.js';
import { migrateToLatest } from './migrations.js';
import { startSqliteWorker, type BatchStatement, type SqliteWorker } from './checkpointer.js';
import { GuardedPgPool, type PgTimeouts } from './pg-pool.js';
import { guardedDialect, type TransactionHooks } from './guarded-dialect.js';
import { asUnavailable } from './unavailable.js';
import type { Dialect } from './dialect.js';

export type { Dialect, BatchStatement };

/** One read statement run with its parameters: the first row's values in column order, or undefined. */
export type RawRead = (...params: unknown[]) => unknown[] | undefined;

export interface Store {
  db: Kysely<Database>;
  dialect: Dialect;
  /**
   * SQLite file databases only (null otherwise): prepares a single-statement read on a second,
   * query-only connection, for the hottest reads (a task read). In WAL mode that connection sees
   * every committed write at once and never a transaction still open on the main connection (which
   * a read on the main connection between a transaction's statements would); rows come back as
   * arrays, which costs a fraction of building an object per row. Errors are classified like
   * Kysely's (a locked file is a 503).
   */
  readRaw: ((sqlText: string) => RawRead) | null;
  /** true when the database answers a trivial query */
  ping(): Promise<boolean>;
  /**
   * Runs background work that can be retried later (the usage ledger's batches) without ever
   * waiting for a lock: on SQLite the work runs on the connection alone with `busy_timeout = 0`, so
   * a write lock another process holds fails it at once (SQLITE_BUSY, a DatabaseUnavailableError)
   * instead of standing the event loop still for `busy_timeout_ms`. On PostgreSQL, whose waits do
   * not block the process, it simply runs `work`.
   */
  withoutLockWait<T>(work: (db: Kysely<Database>) => Promise<T>): Promise<T>;
  /**
   * Runs statements that can be retried later (the usage ledger's batches) as one transaction, off
   * the event loop where it can: on a SQLite file in the background worker thread, which has its
   * own connection and may wait up to `busy_timeout_ms` for a write lock (only the worker waits).
   * Elsewhere (PostgreSQL, `:memory:`, a worker that died) on the store's connection through
   * `withoutLockWait`. Resolves when the transaction committed; on failure nothing of it is
   * written (errors classified as Kysely's: a locked file is a DatabaseUnavailableError).
   */
  writeBatch(batch: readonly BatchStatement[]): Promise<void>;
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

/**
 * Keeps the SQLite worker's batches and the gateway connection's transactions apart, in the order
 * they asked (a FIFO turn). In WAL mode a transaction that has read holds a snapshot, and SQLite
 * refuses its first write outright (SQLITE_BUSY_SNAPSHOT, no busy wait) if another connection
 * committed since; a batch that committed in the middle of a transaction would turn that
 * transaction into a 503. Nor should the background writes that never wait for a lock
 * (withoutLockWait) meet a batch being written. Turns are taken asynchronously: the event loop
 * never waits, a transaction just starts after the batch in progress (about a millisecond).
 * The gateway's connection is one connection (Kysely lends it to one caller at a time), so its
 * turn is re-entrant: a transaction inside withoutLockWait does not wait for itself.
 */
class WriterTurns {
  private tail: Promise<void> = Promise.resolve();
  private depth = 0;
  private release: (() => void) | null = null;

  private take(): Promise<() => void> {
    let release!: () => void;
    const mine = new Promise<void>((r) => (release = r));
    const before = this.tail;
    this.tail = before.then(() => mine);
    return before.then(() => release);
  }

  readonly hooks: TransactionHooks = {
    statement: (q, run) => this.statement(q, run),
    enter: async () => {
      if (this.depth++ > 0) return;
      this.release = await this.take();
    },
    leave: () => {
      if (this.depth === 0 || --this.depth > 0) return;
      const release = this.release;
      this.release = null;
      release?.();
    },
  };

  /** The gateway connection's statements: a write outside any transaction takes a turn of its own. */
  readonly statement = <R>(q: CompiledQuery, run: () => Promise<QueryResult<R>>): Promise<QueryResult<R>> => {
    if (this.depth > 0 || isRead(q)) return run();
    return (async () => {
      await this.hooks.enter();
      try {
        return await run();
      } finally {
        this.hooks.leave();
      }
    })();
  };

  async batch<T>(run: () => Promise<T>): Promise<T> {
    const release = await this.take();
    try {
      return await run();
    } finally {
      release();
    }
  }
}

/**
 * The query-only connection's reads (a client's task read), synchronous. Reads made in the same
 * turn of the event loop share one read transaction: opening and closing a snapshot (the WAL's
 * read lock, the file's shared lock, the check of the WAL index) costs more than the row itself.
 * The snapshot ends at the end of the turn (setImmediate) and before the next read once this
 * process wrote anything since it began (`writes()` moved): an answer sent after a commit — a
 * created task, a status move — is never followed by a read that misses it. Another process's
 * commit (the CLI) is seen from the next turn on, as it would be by a read made a moment earlier.
 */
function groupedReads(conn: SqliteConnection, writes: () => number): (sqlText: string) => RawRead {
  const begin = conn.prepare('BEGIN');
  const commit = conn.prepare('COMMIT');
  // writes() when the open snapshot began; -1: none open.
  let since = -1;
  let scheduled = false;
  const close = () => {
    since = -1;
    if (!conn.open || !conn.inTransaction) return;
    try {
      commit.run();
    } catch {
      // A read transaction's COMMIT does not fail; should it, the connection is closed below or
      // the next read reports what is wrong with the file.
      if (conn.inTransaction) conn.exec('ROLLBACK');
    }
  };
  const endOfTurn = () => {
    scheduled = false;
    try {
      close();
    } catch {
      // Nothing to answer here; the next read starts with its own check.
    }
  };
  return (sqlText: string) => {
    const stmt = conn.prepare(sqlText).raw(true);
    return (...params: unknown[]) => {
      try {
        if (since >= 0 && since !== writes()) close();
        if (since < 0) {
          if (!conn.inTransaction) begin.run();
          since = writes();
          if (!scheduled) {
            scheduled = true;
            setImmediate(endOfTurn);
          }
        }
        return stmt.get(...params) as unknown[] | undefined;
      } catch (err) {
        try {
          close();
        } catch {
          // The read's own error is the one to report.
        }
        throw asUnavailable(err);
      }
    };
  };
}

/** A statement that cannot write: a built SELECT, or raw SQL that starts with SELECT. */
function isRead(q: CompiledQuery): boolean {
  return q.query.kind === 'SelectQueryNode' || (q.query.kind === 'RawNode' && /^\s*select\b/i.test(q.sql));
}

/** How long the store waits for the database; see docs/configuration.md (`database`). */
export interface StoreTimeouts {
  connect_timeout_ms: number;
  statement_timeout_ms: number;
  query_timeout_ms: number;
  busy_timeout_ms: number;
}

export const DEFAULT_STORE_TIMEOUTS: StoreTimeouts = { connect_timeout_ms: 3000, statement_timeout_ms: 5000, query_timeout_ms: 6000, busy_timeout_ms: 1000 };

/** /readyz's own bound: a database that does not answer `select 1` this fast is not ready. */
const PING_TIMEOUT_MS = 1500;

export interface StoreOptions {
  migrate?: boolean;
  poolSize?: number;
  backgroundCheckpoints?: boolean;
  timeouts?: Partial<StoreTimeouts>;
  /** Where the store reports a lost or hung database (stderr when absent). */
  warn?: (message: string) => void;
}

export async function openStore(url: string, opts: StoreOptions = {}): Promise<Store> {
  const { dialect, target } = parseDatabaseUrl(url);
  const timeouts = { ...DEFAULT_STORE_TIMEOUTS, ...opts.timeouts };
  const warn = opts.warn ?? ((m: string) => process.stderr.write(`mediagate: ${m}\n`));
  let db: Kysely<Database>;
  let worker: SqliteWorker | null = null;
  let pgPool: GuardedPgPool | null = null;
  let reader: SqliteConnection | null = null;
  const busyMs = Math.max(0, Math.floor(timeouts.busy_timeout_ms));
  const turns = new WriterTurns();
  // Writes this process made on SQLite (its connection's statements, the worker's batches).
  let writes = 0;
  const countedWrite = <R>(run: () => Promise<R>): Promise<R> => {
    try {
      return run();
    } finally {
      writes++;
    }
  };
  if (dialect === 'sqlite') {
    const { default: BetterSqlite } = await import('better-sqlite3');
    if (target !== ':memory:') mkdirSync(dirname(target), { recursive: true });
    const conn = new BetterSqlite(target);
    conn.pragma('journal_mode = WAL');
    conn.pragma('synchronous = NORMAL');
    // better-sqlite3 waits for a lock synchronously (the event loop stands still meanwhile), so the
    // wait is short; a write that still finds the file locked answers 503 (unavailable.ts).
    conn.pragma(`busy_timeout = ${busyMs}`);
    if (target !== ':memory:') {
      const checkpoints = opts.backgroundCheckpoints !== false;
      if (checkpoints) conn.pragma('wal_autocheckpoint = 0');
      worker = startSqliteWorker(target, { checkpointMs: checkpoints ? 1000 : 0, busyMs, onError: (m) => process.stderr.write(`mediagate: ${m}\n`) });
    }
    // Integers above 2^53 never occur in our columns (ms timestamps, micro-dollars).
    // Every write statement of the gateway's connection (a COMMIT too) is counted once it ran: the
    // reader's shared snapshot (groupedReads) then ends before the next read.
    const hooks: TransactionHooks | undefined = worker
      ? { ...turns.hooks, statement: (q, run) => turns.statement(q, isRead(q) ? run : () => countedWrite(run)) }
      : undefined;
    db = new Kysely<Database>({ dialect: guardedDialect(new SqliteDialect({ database: withStatementCache(conn) }), hooks) });
    if (opts.migrate !== false) await migrateToLatest(db, dialect);
    if (target !== ':memory:') {
      reader = new BetterSqlite(target);
      reader.pragma(`busy_timeout = ${busyMs}`);
      reader.pragma('query_only = ON');
    }
  } else {
    const pg = (await import('pg')).default;
    // int8 (bigint) columns hold ms timestamps and micro-dollars, all well inside 2^53.
    pg.types.setTypeParser(20, (v: string) => Number(v));
    // Migrations may legitimately run longer than any request's query: they get a connection of
    // their own without the statement and query timeouts.
    if (opts.migrate !== false) {
      const plain = new Kysely<Database>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: target, max: 1, connectionTimeoutMillis: timeouts.connect_timeout_ms }) }) });
      try {
        await migrateToLatest(plain, dialect);
      } finally {
        await plain.destroy();
      }
    }
    const pgTimeouts: PgTimeouts = { connectMs: timeouts.connect_timeout_ms, statementMs: timeouts.statement_timeout_ms, queryMs: timeouts.query_timeout_ms, probeMs: 500 };
    pgPool = new GuardedPgPool(pg, target, pgTimeouts, opts.poolSize ?? 10, warn);
    db = new Kysely<Database>({ dialect: guardedDialect(new PostgresDialect({ pool: pgPool })) });
  }
  // Kysely's SQLite driver lends its one connection to one caller at a time: while `work` holds it
  // nothing else runs on it, so the pragma applies to `work`'s statements only.
  const noWait = sql.raw('pragma busy_timeout = 0');
  const restore = sql.raw(`pragma busy_timeout = ${busyMs}`);
  const withoutLockWait = <T>(work: (db: Kysely<Database>) => Promise<T>): Promise<T> =>
    dialect !== 'sqlite' || busyMs === 0
      ? work(db)
      : db.connection().execute(async (one) => {
          // Its single statements too take their turn with the worker's batches (a transaction in
          // `work` would anyway): with busy_timeout = 0 a batch being written would fail them.
          await turns.hooks.enter();
          try {
            await noWait.execute(one);
            try {
              return await work(one);
            } finally {
              await restore.execute(one);
            }
          } finally {
            turns.hooks.leave();
          }
        });
  const onConnection = (batch: readonly BatchStatement[]) =>
    withoutLockWait(async (one) => {
      const run = async (q: Kysely<Database>) => {
        for (const s of batch) await q.executeQuery(CompiledQuery.raw(s.sql, [...s.parameters]));
      };
      await (batch.length === 1 ? run(one) : one.transaction().execute(run));
    });
  const bg = worker;
  const writeBatch = (batch: readonly BatchStatement[]): Promise<void> => {
    if (!batch.length) return Promise.resolve();
    if (!bg?.alive) return onConnection(batch);
    // Counted before the caller goes on (the worker committed on a connection of its own).
    return turns.batch(() => bg.run(batch)).then(
      () => {
        writes++;
      },
      (err: unknown) => {
        writes++;
        throw asUnavailable(err);
      },
    );
  };
  return {
    db,
    dialect,
    readRaw: reader ? groupedReads(reader, () => writes) : null,
    withoutLockWait,
    writeBatch,
    async ping() {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<false>((resolve) => {
        timer = setTimeout(() => {
          pgPool?.suspect(`database did not answer a ping within ${PING_TIMEOUT_MS} ms`);
          resolve(false);
        }, PING_TIMEOUT_MS);
      });
      const answer = sql`select 1`.execute(db).then(
        () => true,
        () => false,
      );
      try {
        return await Promise.race([answer, late]);
      } finally {
        clearTimeout(timer);
      }
    },
    async close() {
      reader?.close();
      await db.destroy();
      await worker?.stop();
    },
  };
}

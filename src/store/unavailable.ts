// Which database errors mean "the database is not reachable right now" (a restart, a failover, a
// hung server, a locked SQLite file) rather than a bug in a query. Those become one error type the
// rest of the gateway answers with 503 `database_unavailable`, so a client retries instead of
// seeing 500.

/** The database could not serve a query right now; the request may be retried. */
export class DatabaseUnavailableError extends Error {
  /** Read by the error handlers: the HTTP status this error stands for. */
  readonly statusCode = 503;
  readonly code = 'database_unavailable';

  constructor(
    message: string,
    /** It was a timeout: the database accepts connections but does not answer. */
    readonly timeout = false,
  ) {
    super(message);
    this.name = 'DatabaseUnavailableError';
  }
}

// PostgreSQL SQLSTATEs: class 08 connection exceptions, 57P01-57P03 shutdown / cannot connect now,
// 53300 too many connections, 57014 query canceled (statement_timeout).
const PG_UNAVAILABLE = /^(08...|57P0[123]|53300|57014)$/;
const NET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'EAI_AGAIN', 'ENETUNREACH']);
// pg reports a dead or stuck connection by message only.
const PG_MESSAGES = /Connection terminated|not queryable|timeout exceeded when trying to connect|Query read timeout|connection timeout|Connection ended|Client was closed/i;
const TIMEOUT_MESSAGES = /timeout exceeded when trying to connect|Query read timeout|connection timeout|statement timeout/i;

export function isDatabaseUnavailable(err: unknown): boolean {
  if (err instanceof DatabaseUnavailableError) return true;
  const e = err as { code?: unknown; message?: unknown } | null;
  if (!e || typeof e !== 'object') return false;
  const code = typeof e.code === 'string' ? e.code : '';
  if (PG_UNAVAILABLE.test(code) || NET_CODES.has(code)) return true;
  // better-sqlite3: another connection holds the write lock for longer than busy_timeout.
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) return true;
  return typeof e.message === 'string' && PG_MESSAGES.test(e.message);
}

/** The error as a DatabaseUnavailableError when it is one of those; otherwise unchanged. */
export function asUnavailable(err: unknown): unknown {
  if (err instanceof DatabaseUnavailableError || !isDatabaseUnavailable(err)) return err;
  const message = String((err as Error).message ?? err);
  const timeout = TIMEOUT_MESSAGES.test(message) || (err as { code?: unknown }).code === 'ETIMEDOUT';
  return new DatabaseUnavailableError(`database unavailable: ${message}`, timeout);
}

/**
 * Runs `work` again after a short pause when the database dropped it (a terminated backend is
 * replaced at once by the pool). Only for work that is safe to repeat: guarded transitions such as
 * `… WHERE state = 'held'`, which a second run finds already done.
 */
export async function retryWhileUnavailable<T>(work: () => Promise<T>, pausesMs: readonly number[] = [50, 250, 1000]): Promise<T> {
  for (let i = 0; ; i++) {
    try {
      return await work();
    } catch (err) {
      if (i >= pausesMs.length || !isDatabaseUnavailable(err) || (err as DatabaseUnavailableError).timeout) throw err;
      await new Promise((r) => setTimeout(r, pausesMs[i]));
    }
  }
}

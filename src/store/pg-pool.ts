import type { PostgresPool, PostgresPoolClient } from 'kysely';
import type pgTypes from 'pg';
import { asUnavailable, DatabaseUnavailableError } from './unavailable.js';

export interface PgTimeouts {
  /** Opening a connection (TCP + startup) may take this long. */
  connectMs: number;
  /** Server-side statement_timeout of every session. */
  statementMs: number;
  /** Client-side limit for one query's answer: catches a server that stopped answering at all. */
  queryMs: number;
  /** While the database is marked down, it is probed this often. */
  probeMs: number;
}

type Warn = (message: string) => void;

/**
 * The pg pool as the gateway uses it, hardened against a database that restarts, fails over or hangs:
 *
 * - every client has an 'error' listener for its whole life (pg-pool listens only while a client is
 *   idle, so a backend terminated while a client was checked out used to crash the process);
 * - a client whose query failed for connection reasons is destroyed on release, not reused;
 * - connect, statement and query timeouts bound every wait;
 * - after a timeout the database is marked down: connects fail at once with
 *   DatabaseUnavailableError (requests answer 503 immediately instead of each waiting out the
 *   timeouts) while a background probe on its own connection checks it every `probeMs`; the first
 *   probe that answers marks it up again.
 */
export class GuardedPgPool implements PostgresPool {
  private readonly pool: pgTypes.Pool;
  private down = false;
  private probing: NodeJS.Timeout | null = null;
  private lastWarn = 0;
  private closed = false;

  constructor(
    private readonly pg: typeof pgTypes,
    private readonly url: string,
    private readonly timeouts: PgTimeouts,
    max: number,
    private readonly warn: Warn,
  ) {
    this.pool = new pg.Pool({
      connectionString: url,
      max,
      connectionTimeoutMillis: timeouts.connectMs,
      statement_timeout: timeouts.statementMs,
      query_timeout: timeouts.queryMs,
      keepAlive: true,
    });
    // An idle client whose backend died: pg-pool removes it and reports here.
    this.pool.on('error', (err) => this.warnSometimes(`database connection lost while idle (${err.message})`));
    // A checked-out client whose backend died reports here; its pending query fails on its own.
    this.pool.on('connect', (client) => client.on('error', (err) => this.warnSometimes(`database connection lost (${err.message})`)));
  }

  /** true while a timeout has marked the database as not answering. */
  get isDown(): boolean {
    return this.down;
  }

  async connect(): Promise<PostgresPoolClient> {
    if (this.down) throw new DatabaseUnavailableError('database unavailable: not answering (probing in the background)', true);
    let client: pgTypes.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      throw this.failed(err);
    }
    let broken: Error | undefined;
    const query = ((...args: unknown[]) => {
      const r = (client.query as (...a: unknown[]) => unknown)(...args);
      // A cursor (Kysely's stream) is returned as is; a promise's failure is classified.
      if (!(r instanceof Promise)) return r;
      return r.catch((err: unknown) => {
        const e = this.failed(err);
        if (e instanceof DatabaseUnavailableError) broken = e;
        throw e;
      });
    }) as PostgresPoolClient['query'];
    // A broken connection is destroyed (release with an error) instead of going back to the pool.
    return { query, release: () => client.release(broken) };
  }

  async end(): Promise<void> {
    this.closed = true;
    if (this.probing) clearTimeout(this.probing);
    await this.pool.end();
  }

  /** Marks the database down on a timeout; returns the error to throw. */
  private failed(err: unknown): unknown {
    const e = asUnavailable(err);
    if (e instanceof DatabaseUnavailableError && e.timeout) this.markDown(e.message);
    return e;
  }

  /** Marks the database down from outside (a health check that got no answer in time). */
  suspect(why: string): void {
    this.markDown(why);
  }

  private markDown(why: string): void {
    if (this.down || this.closed) return;
    this.down = true;
    this.warn(`${why}; answering 503 until it does (probing every ${this.timeouts.probeMs} ms)`);
    this.scheduleProbe();
  }

  private scheduleProbe(): void {
    this.probing = setTimeout(() => void this.probe(), this.timeouts.probeMs);
    this.probing.unref();
  }

  private async probe(): Promise<void> {
    if (this.closed) return;
    const bound = Math.min(this.timeouts.connectMs, Math.max(this.timeouts.probeMs * 2, 1000));
    const c = new this.pg.Client({ connectionString: this.url, connectionTimeoutMillis: bound, query_timeout: bound });
    c.on('error', () => undefined);
    try {
      await c.connect();
      await c.query('select 1');
      this.down = false;
      this.warn('database answers again');
    } catch {
      this.scheduleProbe();
    } finally {
      c.end().catch(() => undefined);
    }
  }

  private warnSometimes(message: string): void {
    const now = Date.now();
    if (now - this.lastWarn < 5000) return;
    this.lastWarn = now;
    this.warn(message);
  }
}

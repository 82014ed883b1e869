import type { UsageEntry, UsageRepo } from '../store/repos/usage.js';
import type { BatchStatement } from '../store/checkpointer.js';
import { isDatabaseUnavailable } from '../store/unavailable.js';
import { redact } from '../http/redact.js';
import { noteUsage } from '../http/request-facts.js';

/** Rows kept for a retry while the database is unreachable; beyond this the oldest are reported lost. */
const MAX_PENDING = 100_000;
const RETRY_MS = 1000;
/** A statement waiting for its request's row is written without it after this long. */
const PAIR_WAIT_MS = 2000;

/** A statement written with the ledger's batches (a kept Idempotency-Key answer). */
interface Companion {
  statement: BatchStatement;
  /** True once the request's own usage row is in the buffer (or was written). */
  rowRecorded: () => boolean;
  /** Called once the statement is in the database. */
  written: () => void;
  since: number;
}

/**
 * The usage ledger: one row per request, written off the request path. Entries are buffered
 * and inserted in batches every `flushMs` or when `batchSize` are waiting; close() writes the rest.
 */
export class UsageLedger {
  private buffer: UsageEntry[] = [];
  private companions: Companion[] = [];
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly repo: UsageRepo,
    private readonly onError: (err: unknown) => void,
    private readonly flushMs = 200,
    private readonly batchSize = 500,
  ) {}

  record(entry: Omit<UsageEntry, 'created_at'> & { created_at?: number }): void {
    noteUsage(entry);
    this.buffer.push(clean(entry));
    if (this.buffer.length >= this.batchSize) void this.flush();
    else if (!this.timer) {
      this.timer = setTimeout(() => void this.flush(), this.flushMs);
      this.timer.unref();
    }
  }

  /**
   * Writes `statement` in the same transaction as a batch of rows: the first batch written once
   * `rowRecorded()` says its request's row is buffered, so the two land together (or after
   * PAIR_WAIT_MS without it). `written` is called once it is in the database.
   */
  keep(statement: BatchStatement, rowRecorded: () => boolean, written: () => void): void {
    this.companions.push({ statement, rowRecorded, written, since: Date.now() });
    if (!this.timer) {
      this.timer = setTimeout(() => void this.flush(), this.flushMs);
      this.timer.unref();
    }
  }

  /** Writes everything buffered so far; resolves when it is in the database. */
  flush(all = false): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    const batch = this.buffer;
    this.buffer = [];
    // Statements whose row is not buffered yet wait for a later batch (the row follows shortly).
    const now = Date.now();
    const extra: Companion[] = [];
    const waiting: Companion[] = [];
    for (const c of this.companions) (all || c.rowRecorded() || now - c.since > PAIR_WAIT_MS ? extra : waiting).push(c);
    this.companions = waiting;
    if (waiting.length && !this.timer) {
      this.timer = setTimeout(() => void this.flush(), this.flushMs);
      this.timer.unref();
    }
    this.flushing = this.flushing.then(async () => {
      if (!batch.length && !extra.length) return;
      try {
        await this.repo.insertMany(batch, extra.map((c) => c.statement));
        for (const c of extra) c.written();
      } catch (err) {
        // A database restart or failover, or a SQLite write lock another process holds (the repo's
        // writes never wait for one: see Store.withoutLockWait): keep the rows and try again later.
        if (isDatabaseUnavailable(err)) return this.retryLater(batch, err, extra);
        if (batch.length + extra.length === 1) return this.onError(err);
        // One bad row must not lose its whole batch: write the rows one by one, report each failure.
        for (const row of batch) await this.repo.insertMany([row]).catch(this.onError);
        for (const c of extra) await this.repo.insertMany([], [c.statement]).then(c.written, this.onError);
      }
    });
    return this.flushing;
  }

  close(): Promise<void> {
    return this.flush(true);
  }

  private retryLater(batch: UsageEntry[], err: unknown, extra: Companion[] = []): void {
    this.companions = extra.concat(this.companions);
    this.buffer = batch.concat(this.buffer);
    const over = this.buffer.length - MAX_PENDING;
    if (over > 0) {
      this.buffer.splice(0, over);
      this.onError(new Error(`${over} usage rows dropped: the database stayed unreachable (${(err as Error).message})`));
    }
    if (!this.timer) {
      this.timer = setTimeout(() => void this.flush(), RETRY_MS);
      this.timer.unref();
    }
  }
}

/**
 * Integer columns reject fractions (PostgreSQL bigint) and NaN, and PostgreSQL text rejects NUL:
 * a row is made storable here rather than failing its batch later.
 */
function clean(e: Omit<UsageEntry, 'created_at'> & { created_at?: number }): UsageEntry {
  return {
    key_id: text(e.key_id),
    model: text(e.model),
    channel: text(e.channel),
    endpoint: text(e.endpoint),
    status: int(e.status),
    input_units: int(e.input_units),
    output_units: int(e.output_units),
    cost_micros: int(e.cost_micros),
    overage_micros: int(e.overage_micros),
    latency_ms: int(e.latency_ms),
    created_at: int(e.created_at ?? Date.now()),
    billed_by: e.billed_by ? text(e.billed_by) : '',
    // What a client was answered; scrubbed again here, as any text a client sent may be quoted in it.
    error: e.error ? text(redact(e.error)) : '',
  };
}

// Clamped to exact integers: beyond them PostgreSQL's bigint refuses the row (and its batch).
// (One row per request: the common case, a whole number in range or a short clean string, returns
// its value as it is, without building anything.)
function int(v: unknown): number {
  if (typeof v !== 'number' || !Number.isFinite(v)) return 0;
  if (Number.isSafeInteger(v) && v >= 0) return v + 0; // + 0: never -0
  return Math.min(Number.MAX_SAFE_INTEGER, Math.max(0, Math.round(v)));
}

function text(v: unknown): string {
  let s = typeof v === 'string' ? v : String(v ?? '');
  if (s.includes('\u0000')) s = s.split('\u0000').join('');
  return s.length > 256 ? s.slice(0, 256) : s;
}

import { CompiledQuery, type Insertable, type Kysely } from 'kysely';
import type { Database, UsageTable } from '../schema.js';
import type { BatchStatement } from '../checkpointer.js';

export type UsageEntry = Omit<Insertable<UsageTable>, 'id'>;

/**
 * The endpoint of the ledger row a video task writes when it ends (its charge or release). The
 * task's create request has a row of its own, so this one is no second request, and its latency
 * is the task's whole duration, not an HTTP latency.
 */
export const TASK_SETTLE_ENDPOINT = 'video.settle';

export interface UsageTotal {
  key_id: string;
  model: string;
  requests: number;
  input_units: number;
  output_units: number;
  cost_micros: number;
  /** Owed: real costs beyond hold and balance (docs/limits.md, overage). */
  overage_micros: number;
}

// Every column a ledger row writes, in the order of the compiled statements' parameters.
const COLUMNS = ['key_id', 'model', 'channel', 'endpoint', 'status', 'input_units', 'output_units', 'cost_micros', 'overage_micros', 'latency_ms', 'created_at', 'billed_by', 'error'] as const;

/**
 * The parameters of rows `from`..`to` in COLUMNS order, one flat array. Written out column by
 * column: a flush builds a few thousand values on the event loop, and a generic
 * `COLUMNS.map((c) => row[c])` per row costs several times as much.
 */
function parametersOf(rows: readonly UsageEntry[], from: number, to: number): unknown[] {
  const out: unknown[] = [];
  for (let i = from; i < to; i++) {
    const r = rows[i];
    out.push(r.key_id, r.model, r.channel, r.endpoint, r.status, r.input_units, r.output_units, r.cost_micros, r.overage_micros ?? 0, r.latency_ms, r.created_at, r.billed_by ?? '', r.error ?? '');
  }
  return out;
}
// parametersOf must list the columns in COLUMNS order.
{
  const named = Object.fromEntries(COLUMNS.map((c) => [c, c])) as unknown as UsageEntry;
  if (parametersOf([named], 0, 1).join() !== COLUMNS.join()) throw new Error('usage insert: parametersOf does not follow COLUMNS');
}

/** Rows per statement: a batch is written as a few fixed statements, never SQL built for its size. */
const CHUNKS = [100, 10, 1];

export class UsageRepo {
  /** The compiled INSERT of n rows, per chunk size (built on first need, then reused). */
  private readonly inserts = new Map<number, CompiledQuery>();

  /**
   * `writeScope` runs each batch's write (the store's `withoutLockWait` in the gateway: a batch
   * never waits for a SQLite lock on the event loop; the ledger keeps it and retries instead).
   * `writeBatch`, when given, runs each batch's statements as one transaction instead (the store's
   * `writeBatch` in the gateway: on a SQLite file, in its background worker thread).
   */
  constructor(
    private readonly db: Kysely<Database>,
    private readonly writeScope: <T>(work: (db: Kysely<Database>) => Promise<T>) => Promise<T> = (work) => work(db),
    private readonly writeBatch?: (batch: readonly BatchStatement[]) => Promise<void>,
  ) {}

  /** Inserts `rows` and runs `extra` statements (kept idempotent answers) in the same transaction. */
  async insertMany(rows: UsageEntry[], extra: readonly BatchStatement[] = []): Promise<void> {
    if (!rows.length && !extra.length) return;
    const plan: [CompiledQuery, unknown[]][] = [];
    for (let at = 0; at < rows.length; ) {
      const n = CHUNKS.find((c) => c <= rows.length - at)!;
      plan.push([this.insertOf(n), parametersOf(rows, at, at + n)]);
      at += n;
    }
    for (const s of extra) plan.push([CompiledQuery.raw(s.sql), [...s.parameters]]);
    // A batch is one statement or one transaction: a failed batch leaves no row behind (the ledger retries it).
    if (this.writeBatch) return this.writeBatch(plan.map(([q, parameters]) => ({ sql: q.sql, parameters })));
    const run = (db: Kysely<Database>) => Promise.all(plan.map(([q, parameters]) => db.executeQuery({ ...q, parameters })));
    await this.writeScope((db) => (plan.length === 1 ? run(db) : db.transaction().execute(run)));
  }

  private insertOf(n: number): CompiledQuery {
    let q = this.inserts.get(n);
    if (!q) {
      // Distinct sample values, so the parameter order can be checked against COLUMNS.
      const sample = Array.from({ length: n }, (_, i) => Object.fromEntries(COLUMNS.map((c, j) => [c, `${i}:${j}`])) as unknown as Insertable<UsageTable>);
      q = this.db.insertInto('usage').values(sample).compile();
      const expected = sample.flatMap((r) => COLUMNS.map((c) => (r as Record<string, unknown>)[c]));
      if (q.parameters.length !== expected.length || q.parameters.some((v, i) => v !== expected[i])) throw new Error('usage insert: unexpected parameter order');
      this.inserts.set(n, q);
    }
    return q;
  }

  async totals(filter: { keyId?: string; sinceMs?: number } = {}): Promise<UsageTotal[]> {
    let q = this.db
      .selectFrom('usage')
      .select((eb) => [
        'key_id',
        'model',
        eb.fn.countAll<number>().as('requests'),
        eb.fn.sum<number>('input_units').as('input_units'),
        eb.fn.sum<number>('output_units').as('output_units'),
        eb.fn.sum<number>('cost_micros').as('cost_micros'),
        eb.fn.sum<number>('overage_micros').as('overage_micros'),
      ])
      .groupBy(['key_id', 'model'])
      .orderBy('key_id')
      .orderBy('model');
    if (filter.keyId) q = q.where('key_id', '=', filter.keyId);
    if (filter.sinceMs !== undefined) q = q.where('created_at', '>=', filter.sinceMs);
    const rows = await q.execute();
    return rows.map((r) => ({
      key_id: r.key_id,
      model: r.model,
      requests: Number(r.requests),
      input_units: Number(r.input_units ?? 0),
      output_units: Number(r.output_units ?? 0),
      cost_micros: Number(r.cost_micros ?? 0),
      overage_micros: Number(r.overage_micros ?? 0),
    }));
  }
}

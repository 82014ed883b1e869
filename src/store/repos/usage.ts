import type { CompiledQuery, Insertable, Kysely } from 'kysely';
import type { Database, UsageTable } from '../schema.js';

export type UsageEntry = Omit<Insertable<UsageTable>, 'id'>;

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
const COLUMNS = ['key_id', 'model', 'channel', 'endpoint', 'status', 'input_units', 'output_units', 'cost_micros', 'overage_micros', 'latency_ms', 'created_at'] as const;
type Row = { [C in (typeof COLUMNS)[number]]: string | number };

/** Rows per statement: a batch is written as a few fixed statements, never SQL built for its size. */
const CHUNKS = [100, 10, 1];

export class UsageRepo {
  /** The compiled INSERT of n rows, per chunk size (built on first need, then reused). */
  private readonly inserts = new Map<number, CompiledQuery>();

  /**
   * `writeScope` runs each batch's write (the store's `withoutLockWait` in the gateway: a batch
   * never waits for a SQLite lock on the event loop; the ledger keeps it and retries instead).
   */
  constructor(
    private readonly db: Kysely<Database>,
    private readonly writeScope: <T>(work: (db: Kysely<Database>) => Promise<T>) => Promise<T> = (work) => work(db),
  ) {}

  async insertMany(rows: UsageEntry[]): Promise<void> {
    if (!rows.length) return;
    const full = rows.map((r): Row => ({ ...r, overage_micros: r.overage_micros ?? 0 }) as Row);
    const plan: [CompiledQuery, Row[]][] = [];
    for (let at = 0; at < full.length; ) {
      const n = CHUNKS.find((c) => c <= full.length - at)!;
      plan.push([this.insertOf(n), full.slice(at, at + n)]);
      at += n;
    }
    const run = (db: Kysely<Database>) => Promise.all(plan.map(([q, chunk]) => db.executeQuery({ ...q, parameters: chunk.flatMap((r) => COLUMNS.map((c) => r[c])) })));
    // A batch is one statement or one transaction: a failed batch leaves no row behind (the ledger retries it).
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

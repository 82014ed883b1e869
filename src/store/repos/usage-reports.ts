import { sql, type Kysely, type SelectQueryBuilder, type Selectable } from 'kysely';
import type { Database, UsageTable } from '../schema.js';
import { TASK_SETTLE_ENDPOINT } from './usage.js';

// The ledger as operators read it: filtered pages (keyset, newest first), totals grouped by key,
// model, hour or day, and the time-bucketed aggregates of the console's overview. Every query is
// bounded by an index: (created_at, id), (key_id, created_at), (model, created_at).

export type UsageRow = Selectable<UsageTable>;

export interface UsageFilter {
  keyId?: string;
  model?: string;
  /** An exact HTTP status, or a class: 2 = 2xx, 4 = 4xx, 5 = 5xx. */
  status?: number;
  statusClass?: 2 | 3 | 4 | 5;
  fromMs?: number;
  toMs?: number;
}

/** Where the previous page ended (its last row's time and id). */
export interface UsageCursor {
  createdAt: number;
  id: number;
}

export type UsageGroup = 'key' | 'model' | 'hour' | 'day';

/** What a spend series can be split by, and the ledger column that holds it. */
export const SERIES_COLUMNS = { key: 'key_id', model: 'model' } as const;
export type SeriesGroup = keyof typeof SERIES_COLUMNS;

export interface UsageGroupTotal {
  group: string | number;
  requests: number;
  errors: number;
  input_units: number;
  output_units: number;
  cost_micros: number;
}

/** Upper bounds (ms) of the latency classes the percentiles are read from. */
export const LATENCY_BOUNDS = [5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000, 300000, Number.MAX_SAFE_INTEGER];

export interface BucketCell {
  bucket: number;
  status: number;
  latencyClass: number;
  /** Rows that end video tasks: `requests` counts tasks, the latency class is their duration. */
  task: boolean;
  requests: number;
  cost_micros: number;
}

const num = (v: unknown) => Number(v ?? 0);
/** 1 for a row that ends a video task (its create was a request of its own), else 0. */
const isSettle = sql<number>`case when endpoint = ${sql.lit(TASK_SETTLE_ENDPOINT)} then 1 else 0 end`;
/** Requests among the rows: a video task's closing row is not one. */
const requestCount = sql<number>`sum(case when endpoint = ${sql.lit(TASK_SETTLE_ENDPOINT)} then 0 else 1 end)`;

export class UsageReportsRepo {
  constructor(private readonly db: Kysely<Database>) {}

  private filtered<O>(q: SelectQueryBuilder<Database, 'usage', O>, f: UsageFilter): SelectQueryBuilder<Database, 'usage', O> {
    if (f.keyId) q = q.where('key_id', '=', f.keyId);
    if (f.model) q = q.where('model', '=', f.model);
    if (f.status !== undefined) q = q.where('status', '=', f.status);
    if (f.statusClass !== undefined) q = q.where('status', '>=', f.statusClass * 100).where('status', '<', f.statusClass * 100 + 100);
    if (f.fromMs !== undefined) q = q.where('created_at', '>=', f.fromMs);
    if (f.toMs !== undefined) q = q.where('created_at', '<', f.toMs);
    return q;
  }

  /** One page, newest first, after `cursor`. */
  async page(f: UsageFilter, limit: number, cursor?: UsageCursor): Promise<UsageRow[]> {
    let q = this.filtered(this.db.selectFrom('usage').selectAll(), f)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit);
    if (cursor) {
      const { createdAt, id } = cursor;
      q = q.where((eb) => eb.or([eb('created_at', '<', createdAt), eb.and([eb('created_at', '=', createdAt), eb('id', '<', id)])]));
    }
    const rows = await q.execute();
    return rows.map((r) => ({
      ...r,
      id: num(r.id),
      status: num(r.status),
      input_units: num(r.input_units),
      output_units: num(r.output_units),
      cost_micros: num(r.cost_micros),
      latency_ms: num(r.latency_ms),
      created_at: num(r.created_at),
    }));
  }

  async grouped(f: UsageFilter, by: UsageGroup, limit: number): Promise<UsageGroupTotal[]> {
    const size = sql.lit(by === 'hour' ? 3_600_000 : 86_400_000);
    const expr = by === 'key' ? sql<string | number>`key_id` : by === 'model' ? sql<string | number>`model` : sql<string | number>`(created_at / ${size}) * ${size}`;
    const rows = await this.filtered(
      this.db.selectFrom('usage').select((eb) => [
        expr.as('g'),
        requestCount.as('requests'),
        sql<number>`sum(case when status >= 400 and endpoint <> ${sql.lit(TASK_SETTLE_ENDPOINT)} then 1 else 0 end)`.as('errors'),
        eb.fn.sum<number>('input_units').as('input_units'),
        eb.fn.sum<number>('output_units').as('output_units'),
        eb.fn.sum<number>('cost_micros').as('cost_micros'),
      ]),
      f,
    )
      .groupBy(sql`1`)
      .orderBy(sql`1`, by === 'hour' || by === 'day' ? 'desc' : 'asc')
      .limit(limit)
      .execute();
    return rows.map((r) => ({
      group: by === 'hour' || by === 'day' ? num(r.g) : String(r.g),
      requests: num(r.requests),
      errors: num(r.errors),
      input_units: num(r.input_units),
      output_units: num(r.output_units),
      cost_micros: num(r.cost_micros),
    }));
  }

  /** Requests and spend per group (a column of the ledger) and time bucket, over the filter's time range. */
  async series(f: UsageFilter, by: SeriesGroup, bucketMs: number): Promise<{ group: string; bucket: number; requests: number; cost_micros: number }[]> {
    const size = sql.lit(bucketMs);
    const rows = await this.filtered(
      this.db
        .selectFrom('usage')
        .select((eb) => [sql.ref(SERIES_COLUMNS[by]).as('g'), sql<number>`(created_at / ${size}) * ${size}`.as('b'), requestCount.as('n'), eb.fn.sum<number>('cost_micros').as('cost')]),
      f,
    )
      .groupBy([sql`1`, sql`2`])
      .execute();
    return rows.map((r) => ({ group: String(r.g), bucket: num(r.b), requests: num(r.n), cost_micros: num(r.cost) }));
  }

  /** Each key's spend to date and its last request (by the (key_id, created_at) index). */
  async perKey(keyIds: string[]): Promise<Map<string, { cost_micros: number; last_ms: number }>> {
    if (!keyIds.length) return new Map();
    const rows = await this.db
      .selectFrom('usage')
      .select((eb) => ['key_id', eb.fn.sum<number>('cost_micros').as('cost'), eb.fn.max<number>('created_at').as('last')])
      .where('key_id', 'in', keyIds)
      .groupBy('key_id')
      .execute();
    return new Map(rows.map((r) => [r.key_id, { cost_micros: num(r.cost), last_ms: num(r.last) }]));
  }

  /** Requests of [fromMs, now) counted per time bucket, status and latency class (the overview's raw material). */
  async buckets(fromMs: number, bucketMs: number): Promise<BucketCell[]> {
    const cls = sql<number>`case ${sql.join(
      LATENCY_BOUNDS.slice(0, -1).map((b, i) => sql`when latency_ms < ${sql.lit(b)} then ${sql.lit(i)}`),
      sql` `,
    )} else ${sql.lit(LATENCY_BOUNDS.length - 1)} end`;
    const bucket = sql<number>`(created_at / ${sql.lit(bucketMs)}) * ${sql.lit(bucketMs)}`;
    const rows = await this.db
      .selectFrom('usage')
      .select((eb) => [bucket.as('bucket'), 'status', cls.as('cls'), isSettle.as('settle'), eb.fn.countAll<number>().as('n'), eb.fn.sum<number>('cost_micros').as('cost')])
      .where('created_at', '>=', fromMs)
      .groupBy([sql`1`, sql`2`, sql`3`, sql`4`])
      .execute();
    return rows.map((r) => ({ bucket: num(r.bucket), status: num(r.status), latencyClass: num(r.cls), task: num(r.settle) === 1, requests: num(r.n), cost_micros: num(r.cost) }));
  }

  async spendByModel(fromMs: number): Promise<{ model: string; requests: number; cost_micros: number }[]> {
    const rows = await this.db
      .selectFrom('usage')
      .select((eb) => ['model', requestCount.as('n'), eb.fn.sum<number>('cost_micros').as('cost')])
      .where('created_at', '>=', fromMs)
      .groupBy('model')
      .orderBy(sql`3`, 'desc')
      .execute();
    return rows.map((r) => ({ model: r.model, requests: num(r.n), cost_micros: num(r.cost) }));
  }
}

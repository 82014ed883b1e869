import type { Insertable, Kysely } from 'kysely';
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

export class UsageRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insertMany(rows: UsageEntry[]): Promise<void> {
    // Rows of one batch must name the same columns (SQLite has no DEFAULT in a multi-row VALUES).
    if (rows.length) await this.db.insertInto('usage').values(rows.map((r) => (r.overage_micros === undefined ? { ...r, overage_micros: 0 } : r))).execute();
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

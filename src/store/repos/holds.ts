import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';

/** What is held (reserved, not yet settled) per key: shown beside the balance to operators. */
export class HoldsRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async heldByKey(keyIds: string[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    if (!keyIds.length) return out;
    const rows = await this.db
      .selectFrom('reservations')
      .select((eb) => ['key_id', eb.fn.sum<number>('amount_micros').as('held')])
      .where('key_id', 'in', keyIds)
      .where('state', '=', 'held')
      .groupBy('key_id')
      .execute();
    for (const r of rows) out.set(r.key_id, Number(r.held ?? 0));
    return out;
  }
}

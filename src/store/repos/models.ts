import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';

export class ModelsRepo {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * Records a first-seen time for every id not stored yet and returns the stored time of each
   * (the `created` of GET /v1/models when the config sets none). Existing rows are never changed,
   * so `created` is stable across restarts.
   */
  async ensureFirstSeen(ids: string[], nowS = Math.floor(Date.now() / 1000)): Promise<Map<string, number>> {
    if (ids.length) {
      await this.db
        .insertInto('models')
        .values(ids.map((id) => ({ id, first_seen_s: nowS })))
        .onConflict((oc) => oc.column('id').doNothing())
        .execute();
    }
    const rows = ids.length ? await this.db.selectFrom('models').selectAll().where('id', 'in', ids).execute() : [];
    return new Map(rows.map((r) => [r.id, Number(r.first_seen_s)]));
  }
}

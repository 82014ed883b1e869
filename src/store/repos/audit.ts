import type { Insertable, Kysely, Selectable } from 'kysely';
import type { AuditLogTable, Database } from '../schema.js';

export type AuditEntry = Omit<Insertable<AuditLogTable>, 'id'>;
export type AuditRow = Selectable<AuditLogTable>;

export class AuditRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(e: AuditEntry): Promise<void> {
    await this.db.insertInto('audit_log').values(e).execute();
  }

  /** Newest first; `before` is the id of the last row of the previous page. */
  async page(limit: number, before?: number): Promise<AuditRow[]> {
    let q = this.db.selectFrom('audit_log').selectAll().orderBy('id', 'desc').limit(limit);
    if (before !== undefined) q = q.where('id', '<', before);
    const rows = await q.execute();
    return rows.map((r) => ({ ...r, id: Number(r.id), at: Number(r.at) }));
  }
}

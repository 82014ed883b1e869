import type { Kysely, Selectable } from 'kysely';
import type { AdminSessionTable, Database } from '../schema.js';

export type AdminSessionRow = Selectable<AdminSessionTable>;

/** Console sessions, in the database so every instance behind a load balancer knows them. */
export class AdminSessionsRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async create(row: AdminSessionRow): Promise<void> {
    await this.db.insertInto('admin_sessions').values(row).execute();
  }

  /** The live session with this id hash, joined to a token that is not revoked. */
  async findLive(idHash: string, now = Date.now()) {
    const row = await this.db
      .selectFrom('admin_sessions')
      .innerJoin('admin_tokens', 'admin_tokens.id', 'admin_sessions.token_id')
      .select(['admin_sessions.id_hash', 'admin_sessions.csrf', 'admin_sessions.expires_at', 'admin_tokens.id as token_id', 'admin_tokens.name as token_name'])
      .where('admin_sessions.id_hash', '=', idHash)
      .where('admin_tokens.revoked_at', 'is', null)
      .executeTakeFirst();
    if (!row || Number(row.expires_at) <= now) return undefined;
    return row;
  }

  async delete(idHash: string): Promise<void> {
    await this.db.deleteFrom('admin_sessions').where('id_hash', '=', idHash).execute();
  }

  async deleteExpired(now = Date.now()): Promise<void> {
    await this.db.deleteFrom('admin_sessions').where('expires_at', '<=', now).execute();
  }
}

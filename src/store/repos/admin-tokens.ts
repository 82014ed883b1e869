import type { Kysely, Selectable } from 'kysely';
import type { AdminTokenTable, Database } from '../schema.js';
import { randomBase62 } from '../../ids.js';

export type AdminTokenRow = Selectable<AdminTokenTable>;

export class AdminTokensRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async create(name: string, tokenHash: string, tokenPrefix: string, now = Date.now()): Promise<AdminTokenRow> {
    const row: AdminTokenRow = { id: `adm_${randomBase62(16)}`, name, token_hash: tokenHash, token_prefix: tokenPrefix, created_at: now, last_used_at: null, revoked_at: null };
    await this.db.insertInto('admin_tokens').values(row).execute();
    return row;
  }

  findByHash(hash: string): Promise<AdminTokenRow | undefined> {
    return this.db.selectFrom('admin_tokens').selectAll().where('token_hash', '=', hash).executeTakeFirst();
  }

  findById(id: string): Promise<AdminTokenRow | undefined> {
    return this.db.selectFrom('admin_tokens').selectAll().where('id', '=', id).executeTakeFirst();
  }

  findByName(name: string): Promise<AdminTokenRow | undefined> {
    return this.db.selectFrom('admin_tokens').selectAll().where('name', '=', name).where('revoked_at', 'is', null).executeTakeFirst();
  }

  list(): Promise<AdminTokenRow[]> {
    return this.db.selectFrom('admin_tokens').selectAll().orderBy('created_at').orderBy('id').execute();
  }

  async touch(id: string, now = Date.now()): Promise<void> {
    await this.db.updateTable('admin_tokens').set({ last_used_at: now }).where('id', '=', id).execute();
  }

  /** Revokes the token and ends its console sessions; false when unknown or already revoked. */
  async revoke(id: string, now = Date.now()): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const r = await trx.updateTable('admin_tokens').set({ revoked_at: now }).where('id', '=', id).where('revoked_at', 'is', null).executeTakeFirst();
      await trx.deleteFrom('admin_sessions').where('token_id', '=', id).execute();
      return Number(r.numUpdatedRows) === 1;
    });
  }
}

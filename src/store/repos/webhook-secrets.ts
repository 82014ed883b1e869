import type { Kysely, Selectable } from 'kysely';
import type { Database, WebhookSecretTable } from '../schema.js';

export type WebhookSecretRow = Selectable<WebhookSecretTable>;

/** Each key's webhook signing secret; a rotation keeps the previous one signing for a grace period. */
export class WebhookSecretsRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async get(keyId: string): Promise<WebhookSecretRow | undefined> {
    const row = await this.db.selectFrom('webhook_secrets').selectAll().where('key_id', '=', keyId).executeTakeFirst();
    return row ? { ...row, previous_until: Number(row.previous_until), created_at: Number(row.created_at) } : undefined;
  }

  /** Sets a new secret; the old one (if any) keeps signing until `graceUntil`. */
  async rotate(keyId: string, secret: string, now: number, graceUntil: number): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const old = await trx.selectFrom('webhook_secrets').select('secret').where('key_id', '=', keyId).executeTakeFirst();
      if (old) {
        await trx.updateTable('webhook_secrets').set({ secret, previous_secret: old.secret, previous_until: graceUntil, created_at: now }).where('key_id', '=', keyId).execute();
      } else {
        await trx.insertInto('webhook_secrets').values({ key_id: keyId, secret, previous_secret: null, previous_until: 0, created_at: now }).execute();
      }
    });
  }
}

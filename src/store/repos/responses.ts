import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';

// Stored Responses API answers: the response object, its whole input, and every item it
// introduced (input items the client sent new, output items) by id. Every read is scoped to the
// key that created the rows and ignores rows past their expiry.

export interface StoredResponse {
  id: string;
  model: string;
  body: Record<string, unknown>;
  inputItems: Record<string, unknown>[];
  createdAt: number;
}

export interface NewStoredResponse {
  id: string;
  keyId: string;
  model: string;
  body: Record<string, unknown>;
  inputItems: Record<string, unknown>[];
  /** Items to find by id later: the client's new input items and the output items. */
  items: Record<string, unknown>[];
  expiresAt: number;
}

export class ResponsesRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async save(r: NewStoredResponse, now = Date.now()): Promise<void> {
    await this.db.transaction().execute(async (tx) => {
      await tx
        .insertInto('responses')
        .values({ id: r.id, key_id: r.keyId, model: r.model, body: JSON.stringify(r.body), input_items: JSON.stringify(r.inputItems), created_at: now, expires_at: r.expiresAt })
        .execute();
      const rows = r.items.filter((i) => typeof i.id === 'string' && i.id).map((i) => ({ id: String(i.id), key_id: r.keyId, response_id: r.id, body: JSON.stringify(i), expires_at: r.expiresAt }));
      // An item id already stored (a client resending an item with its id) keeps its first row.
      for (let at = 0; at < rows.length; at += 200) {
        await tx.insertInto('response_items').values(rows.slice(at, at + 200)).onConflict((oc) => oc.column('id').doNothing()).execute();
      }
    });
  }

  async get(keyId: string, id: string, now = Date.now()): Promise<StoredResponse | null> {
    if (!storable(id)) return null;
    const row = await this.db.selectFrom('responses').selectAll().where('id', '=', id).where('key_id', '=', keyId).where('expires_at', '>', now).executeTakeFirst();
    if (!row) return null;
    return { id: row.id, model: row.model, body: JSON.parse(row.body), inputItems: JSON.parse(row.input_items), createdAt: Number(row.created_at) };
  }

  /** The stored items of these ids that belong to the key, by id. */
  async items(keyId: string, ids: string[], now = Date.now()): Promise<Map<string, Record<string, unknown>>> {
    const out = new Map<string, Record<string, unknown>>();
    ids = ids.filter(storable);
    if (!ids.length) return out;
    const rows = await this.db.selectFrom('response_items').select(['id', 'body']).where('id', 'in', ids).where('key_id', '=', keyId).where('expires_at', '>', now).execute();
    for (const r of rows) out.set(r.id, JSON.parse(r.body));
    return out;
  }

  /** Deletes a key's response and its items; false when there was none. */
  async delete(keyId: string, id: string, now = Date.now()): Promise<boolean> {
    if (!storable(id)) return false;
    return this.db.transaction().execute(async (tx) => {
      const res = await tx.deleteFrom('responses').where('id', '=', id).where('key_id', '=', keyId).where('expires_at', '>', now).executeTakeFirst();
      if (Number(res.numDeletedRows) === 0) return false;
      await tx.deleteFrom('response_items').where('response_id', '=', id).where('key_id', '=', keyId).execute();
      return true;
    });
  }

  /** Removes what expired (called by a periodic sweep). */
  async sweep(now = Date.now()): Promise<number> {
    const res = await this.db.deleteFrom('responses').where('expires_at', '<=', now).executeTakeFirst();
    await this.db.deleteFrom('response_items').where('expires_at', '<=', now).execute();
    return Number(res.numDeletedRows);
  }
}

/** Ids come from clients; one with a NUL byte was never stored (PostgreSQL text cannot hold it). */
function storable(id: string): boolean {
  return !id.includes('\u0000');
}

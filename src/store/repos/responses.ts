import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../schema.js';

// Stored Responses API answers, per key. A response keeps its object, the input items its request
// added and a pointer to the response it continued (parent_id), so a conversation is a chain stored
// once. Items it introduced (new input items, output items) are also kept by id, unique per key,
// for item_reference. Every read is scoped to the key that created the rows and ignores rows past
// their expiry; an item lives as long as the response that stored it last.

type Json = Record<string, unknown>;

export interface StoredResponse {
  id: string;
  model: string;
  body: Json;
  /** The items its request added; the turns before are its parent's. */
  inputItems: Json[];
  parentId: string | null;
  depth: number;
  bytes: number;
  createdAt: number;
}

export interface NewStoredResponse {
  id: string;
  keyId: string;
  model: string;
  body: Json;
  inputItems: Json[];
  parentId: string | null;
  depth: number;
  /** Responses it used (its chain, those holding items it referenced): they are kept as long as it is. */
  renew: string[];
  /** Items to find by id later: the client's new input items and the output items. */
  items: Json[];
  expiresAt: number;
}

/** What one key may keep; past either, its least recently used responses are evicted. */
export interface StoreCaps {
  count: number;
  bytes: number;
}

/** A response's chain, walked from it towards the conversation's start. */
export interface Chain {
  /** Newest first: the response named, then each one it continues. */
  ids: string[];
  /** The depth of the response named. */
  depth: number;
  /** What the responses walked add to a request's input, in bytes (their context_bytes). */
  bytes: number;
  /** The walk passed its byte budget (and stopped there). */
  over: boolean;
  /** An earlier response the chain needs that is no longer stored. */
  missing: string | null;
}

export interface Turn {
  inputItems: Json[];
  output: Json[];
}

/** Ids per statement when a list of ids is bound as parameters. */
const CHUNK = 500;

interface StoredText {
  text: string;
  /** UTF-8 bytes of text. */
  bytes: number;
}

/** The stored text of items `items()` read, so storing one again does not serialize it again. */
const readBack = new WeakMap<Json, StoredText>();

/** A JSON array of items already serialized, and its size. */
function listText(parts: StoredText[]): StoredText {
  let bytes = 2 + Math.max(0, parts.length - 1);
  for (const p of parts) bytes += p.bytes;
  return { text: `[${parts.map((p) => p.text).join(',')}]`, bytes };
}

export class ResponsesRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async save(r: NewStoredResponse, caps: StoreCaps, now = Date.now()): Promise<void> {
    // Each item is serialized once, for the response's lists and its row by id alike; an item read
    // from the store (a resolved reference) reuses the text it was stored as.
    const texts = new Map<Json, StoredText>();
    const textOf = (item: Json): StoredText => {
      let t = texts.get(item) ?? readBack.get(item);
      if (!t) {
        const text = JSON.stringify(item);
        t = { text, bytes: Buffer.byteLength(text) };
      }
      texts.set(item, t);
      return t;
    };
    const input = listText(r.inputItems.map(textOf));
    const output = listText((Array.isArray(r.body.output) ? (r.body.output as Json[]) : []).map(textOf));
    const bodyJson = JSON.stringify(r.body);
    // One row per id: an id given twice (an output item the client chose the id of) keeps the last.
    const items = new Map<string, { key_id: string; id: string; response_id: string; body: string; bytes: number }>();
    for (const i of r.items) {
      if (typeof i.id !== 'string' || !i.id) continue;
      const { text, bytes } = textOf(i);
      items.set(i.id, { key_id: r.keyId, id: i.id, response_id: r.id, body: text, bytes });
    }
    await this.db.transaction().execute(async (tx) => {
      await tx
        .insertInto('responses')
        .values({
          id: r.id,
          key_id: r.keyId,
          model: r.model,
          body: bodyJson,
          input_items: input.text,
          parent_id: r.parentId,
          depth: r.depth,
          bytes: input.bytes + Buffer.byteLength(bodyJson),
          context_bytes: input.bytes + output.bytes,
          created_at: now,
          expires_at: r.expiresAt,
        })
        .execute();
      const rows = [...items.values()];
      // An id this key stored before now belongs to this response: the newest copy is what a
      // reference finds.
      for (let at = 0; at < rows.length; at += 200) {
        await tx
          .insertInto('response_items')
          .values(rows.slice(at, at + 200))
          .onConflict((oc) => oc.columns(['key_id', 'id']).doUpdateSet((eb) => ({ response_id: eb.ref('excluded.response_id'), body: eb.ref('excluded.body'), bytes: eb.ref('excluded.bytes') })))
          .execute();
      }
      for (let at = 0; at < r.renew.length; at += CHUNK) {
        await tx
          .updateTable('responses')
          .set({ expires_at: r.expiresAt })
          .where('key_id', '=', r.keyId)
          .where('id', 'in', r.renew.slice(at, at + CHUNK))
          .where('expires_at', '>', now)
          .where('expires_at', '<', r.expiresAt)
          .execute();
      }
      await evict(tx, r.keyId, r.id, caps, now);
    });
  }

  async get(keyId: string, id: string, now = Date.now()): Promise<StoredResponse | null> {
    if (!storable(id)) return null;
    const row = await this.db.selectFrom('responses').selectAll().where('id', '=', id).where('key_id', '=', keyId).where('expires_at', '>', now).executeTakeFirst();
    if (!row) return null;
    return {
      id: row.id,
      model: row.model,
      body: JSON.parse(row.body),
      inputItems: JSON.parse(row.input_items),
      parentId: row.parent_id,
      depth: Number(row.depth),
      bytes: Number(row.bytes),
      createdAt: Number(row.created_at),
    };
  }

  /**
   * Walks a key's chain from `id` towards its start, reading only ids and sizes, and stops once the
   * responses walked pass `budget` bytes. Null when `id` itself is not stored for the key.
   */
  async chain(keyId: string, id: string, budget: number, now = Date.now()): Promise<Chain | null> {
    if (!storable(id)) return null;
    const limit = Math.max(0, Math.floor(budget));
    const { rows } = await sql<{ id: string; parent_id: string | null; depth: number | string; total: number | string }>`
      with recursive chain(id, parent_id, depth, total) as (
        select id, parent_id, depth, context_bytes from responses where id = ${id} and key_id = ${keyId} and expires_at > ${now}
        union all
        select r.id, r.parent_id, r.depth, c.total + r.context_bytes from chain c join responses r on r.id = c.parent_id
        where r.key_id = ${keyId} and r.expires_at > ${now} and c.total <= ${limit}
      )
      select id, parent_id, depth, total from chain order by total`.execute(this.db);
    if (!rows.length) return null;
    const last = rows[rows.length - 1];
    const bytes = Number(last.total);
    const over = bytes > limit;
    return { ids: rows.map((r) => r.id), depth: Number(rows[0].depth), bytes, over, missing: over ? null : last.parent_id };
  }

  /** The stored turns of these responses of the key, oldest first (the order of `ids` reversed); `missing`: one that is gone. */
  async turns(keyId: string, ids: string[], now = Date.now()): Promise<{ turns: Turn[]; missing: string | null }> {
    const found = new Map<string, Turn>();
    for (let at = 0; at < ids.length; at += CHUNK) {
      const rows = await this.db
        .selectFrom('responses')
        .select(['id', 'input_items', 'body'])
        .where('key_id', '=', keyId)
        .where('id', 'in', ids.slice(at, at + CHUNK))
        .where('expires_at', '>', now)
        .execute();
      for (const row of rows) {
        const output = (JSON.parse(row.body) as Json).output;
        found.set(row.id, { inputItems: JSON.parse(row.input_items), output: Array.isArray(output) ? output : [] });
      }
    }
    const turns: Turn[] = [];
    for (let i = ids.length - 1; i >= 0; i--) {
      const turn = found.get(ids[i]);
      if (!turn) return { turns: [], missing: ids[i] };
      turns.push(turn);
    }
    return { turns, missing: null };
  }

  /** The key's stored items of these ids (those it has): their sizes and the responses holding them, by id. */
  async itemSizes(keyId: string, ids: string[], now = Date.now()): Promise<Map<string, { bytes: number; responseId: string }>> {
    const out = new Map<string, { bytes: number; responseId: string }>();
    for (const row of await this.itemRows(keyId, ids, false, now)) out.set(row.id, { bytes: Number(row.bytes), responseId: row.response_id });
    return out;
  }

  /** The key's stored items of these ids (those it has), by id. */
  async items(keyId: string, ids: string[], now = Date.now()): Promise<Map<string, Json>> {
    const out = new Map<string, Json>();
    for (const row of await this.itemRows(keyId, ids, true, now)) {
      const item = JSON.parse(row.body!) as Json;
      readBack.set(item, { text: row.body!, bytes: Number(row.bytes) });
      out.set(row.id, item);
    }
    return out;
  }

  private async itemRows(keyId: string, ids: string[], withBody: boolean, now: number): Promise<{ id: string; response_id: string; bytes: number | string; body?: string }[]> {
    const wanted = [...new Set(ids.filter(storable))];
    const out: { id: string; response_id: string; bytes: number | string; body?: string }[] = [];
    for (let at = 0; at < wanted.length; at += CHUNK) {
      const base = this.db
        .selectFrom('response_items as i')
        .innerJoin('responses as r', 'r.id', 'i.response_id')
        .where('i.key_id', '=', keyId)
        .where('i.id', 'in', wanted.slice(at, at + CHUNK))
        .where('r.key_id', '=', keyId)
        .where('r.expires_at', '>', now);
      out.push(...(withBody ? await base.select(['i.id', 'i.response_id', 'i.bytes', 'i.body']).execute() : await base.select(['i.id', 'i.response_id', 'i.bytes']).execute()));
    }
    return out;
  }

  /** Deletes a key's response and its items; false when there was none. */
  async delete(keyId: string, id: string, now = Date.now()): Promise<boolean> {
    if (!storable(id)) return false;
    return this.db.transaction().execute(async (tx) => {
      const res = await tx.deleteFrom('responses').where('id', '=', id).where('key_id', '=', keyId).where('expires_at', '>', now).executeTakeFirst();
      if (Number(res.numDeletedRows) === 0) return false;
      await tx.deleteFrom('response_items').where('key_id', '=', keyId).where('response_id', '=', id).execute();
      return true;
    });
  }

  /** Removes what expired (called by a periodic sweep). */
  async sweep(now = Date.now()): Promise<number> {
    return this.db.transaction().execute(async (tx) => {
      await tx
        .deleteFrom('response_items')
        .where('response_id', 'in', (eb) => eb.selectFrom('responses').select('id').where('expires_at', '<=', now))
        .execute();
      const res = await tx.deleteFrom('responses').where('expires_at', '<=', now).executeTakeFirst();
      return Number(res.numDeletedRows);
    });
  }
}

/**
 * Brings a key within its caps by deleting its least recently used responses (earliest expiry;
 * a conversation's earlier turns are renewed with each new one, and among equals the later turn
 * goes first, so a turn never goes before one that continues it). The response just stored stays.
 */
async function evict(tx: Transaction<Database>, keyId: string, keep: string, caps: StoreCaps, now: number): Promise<void> {
  const totals = await tx
    .selectFrom('responses')
    .select((eb) => [eb.fn.countAll<number | string>().as('n'), eb.fn.coalesce(eb.fn.sum<number | string>('bytes'), sql<number>`0`).as('b')])
    .where('key_id', '=', keyId)
    .where('expires_at', '>', now)
    .executeTakeFirstOrThrow();
  let count = Number(totals.n);
  let bytes = Number(totals.b);
  while (count > caps.count || bytes > caps.bytes) {
    const page = await tx
      .selectFrom('responses')
      .select(['id', 'bytes'])
      .where('key_id', '=', keyId)
      .where('expires_at', '>', now)
      .where('id', '!=', keep)
      .orderBy('expires_at')
      .orderBy('depth', 'desc')
      .orderBy('created_at')
      .orderBy('id')
      .limit(CHUNK)
      .execute();
    const victims: string[] = [];
    for (const row of page) {
      if (count <= caps.count && bytes <= caps.bytes) break;
      victims.push(row.id);
      count--;
      bytes -= Number(row.bytes);
    }
    if (!victims.length) return;
    await tx.deleteFrom('response_items').where('key_id', '=', keyId).where('response_id', 'in', victims).execute();
    await tx.deleteFrom('responses').where('key_id', '=', keyId).where('id', 'in', victims).execute();
  }
}

/** Ids come from clients; one with a NUL byte was never stored (PostgreSQL text cannot hold it). */
function storable(id: string): boolean {
  return !id.includes('\u0000');
}

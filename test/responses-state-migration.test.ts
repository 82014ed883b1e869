import Database from 'better-sqlite3';
import pg from 'pg';
import { Kysely, Migrator, PostgresDialect, SqliteDialect } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { migrateToLatest, migrations } from '../src/store/migrations.js';
import { parseDatabaseUrl } from '../src/store/db.js';
import { ResponsesRepo } from '../src/store/repos/responses.js';
import { resolveInput } from '../src/routes/responses-state.js';
import { freshDatabaseUrl, testDialect } from './helpers/databases.js';

// Responses stored before conversations were chained keep working after migration 0010: a row
// that holds its whole input reads as a conversation's start, a later turn continues from it, its
// items are found by id for their key, and each row gets its size.

const msg = (id: string, role: string, text: string) => ({ id, type: 'message', role, content: [{ type: role === 'user' ? 'input_text' : 'output_text', text }] });

describe('migration 0010: stored Responses state carried over', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c();
  });

  it('reads an old response as the start of its conversation and finds its items per key', async () => {
    const dialect = testDialect();
    const fresh = await freshDatabaseUrl();
    cleanups.push(fresh.drop);
    const { target } = parseDatabaseUrl(fresh.url);
    const db = new Kysely<any>({
      dialect: dialect === 'postgres' ? new PostgresDialect({ pool: new pg.Pool({ connectionString: target, max: 1 }) }) : new SqliteDialect({ database: new Database(target) }),
    });
    cleanups.push(() => db.destroy());
    const before = Object.keys(migrations(dialect)).filter((n) => n < '0010_responses_chain');
    const migrated = await new Migrator({ db, provider: { getMigrations: async () => migrations(dialect) }, allowUnorderedMigrations: true }).migrateTo(before[before.length - 1]);
    expect(migrated.error).toBeUndefined();

    // The old layout: the second turn's row holds the first turn too; an item id global.
    const now = Date.now();
    const expires = now + 86_400_000;
    const whole = [msg('msg_u1', 'user', 'Hello ü'), msg('msg_a1', 'assistant', 'You said: Hello ü'), msg('msg_u2', 'user', 'Again')];
    const body = { id: 'resp_old', object: 'response', output: [msg('msg_a2', 'assistant', 'You said: Again')] };
    await db.insertInto('responses').values({ id: 'resp_old', key_id: 'k1', model: 'gpt-sim', body: JSON.stringify(body), input_items: JSON.stringify(whole), created_at: now, expires_at: expires }).execute();
    await db
      .insertInto('response_items')
      .values([
        { id: 'msg_u2', key_id: 'k1', response_id: 'resp_old', body: JSON.stringify(whole[2]), expires_at: expires },
        { id: 'msg_a2', key_id: 'k1', response_id: 'resp_old', body: JSON.stringify(body.output[0]), expires_at: expires },
        // An item whose response is gone: nothing can reach it, it is not carried over.
        { id: 'msg_orphan', key_id: 'k1', response_id: 'resp_gone', body: '{}', expires_at: expires },
      ])
      .execute();

    expect(await migrateToLatest(db, dialect)).toContain('0010_responses_chain');
    const row = await db.selectFrom('responses').selectAll().where('id', '=', 'resp_old').executeTakeFirstOrThrow();
    expect(row.parent_id).toBeNull();
    expect(Number(row.depth)).toBe(0);
    expect(Number(row.bytes)).toBe(Buffer.byteLength(JSON.stringify(whole)) + Buffer.byteLength(JSON.stringify(body)));
    expect(Number(row.context_bytes)).toBe(Number(row.bytes));
    expect((await db.selectFrom('response_items').select('id').orderBy('id').execute()).map((r) => r.id)).toEqual(['msg_a2', 'msg_u2']);

    const repo = new ResponsesRepo(db);
    const next = await resolveInput(repo, 'k1', [msg('msg_u3', 'user', 'Third'), { type: 'item_reference', id: 'msg_a2' }], 'resp_old', 200, { bytes: 1_000_000, mb: 1 });
    expect(next.input.map((i) => i.id)).toEqual(['msg_u1', 'msg_a1', 'msg_u2', 'msg_a2', 'msg_u3', 'msg_a2']);
    expect(next).toMatchObject({ parentId: 'resp_old', renew: ['resp_old'], depth: 1 });
    // Another key sees none of it, and may now store the same item id.
    expect((await repo.items('k2', ['msg_a2'])).size).toBe(0);
    await repo.save({ id: 'resp_k2', keyId: 'k2', model: 'gpt-sim', body: { output: [] }, inputItems: [], parentId: null, depth: 0, renew: [], items: [{ id: 'msg_a2', type: 'message' }], expiresAt: expires }, { count: 10, bytes: 1e9 });
    expect(await repo.items('k2', ['msg_a2'])).toEqual(new Map([['msg_a2', { id: 'msg_a2', type: 'message' }]]));
    expect((await repo.items('k1', ['msg_a2'])).get('msg_a2')).toEqual(body.output[0]);
  });
});

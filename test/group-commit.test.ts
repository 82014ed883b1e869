import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { openStore, type Store } from '../src/store/db.js';
import { KeysRepo } from '../src/store/repos/keys.js';
import { ReservationsRepo } from '../src/store/repos/reservations.js';
import { GroupCommit } from '../src/store/group-commit.js';
import { freshDatabaseUrl } from './helpers/databases.js';

describe('group commit of balance moves', () => {
  let store: Store;
  let drop: () => Promise<void>;
  beforeEach(async () => {
    const db = await freshDatabaseUrl();
    drop = db.drop;
    store = await openStore(db.url);
  });
  afterEach(async () => {
    await store.close();
    await drop();
  });

  it('accepts exactly 37 of 100 concurrent reservations against a balance covering 37, and settles each once', async () => {
    const key = await new KeysRepo(store.db).create({ name: 'g', keyHash: 'a'.repeat(64), keyPrefix: 'mg-', creditMicros: 37 * 1000 + 999 });
    const repo = new ReservationsRepo(store.db, { groupCommit: true });
    const ids = await Promise.all(Array.from({ length: 100 }, () => repo.reserve(key.id, 1000)));
    const accepted = ids.filter((x): x is string => x !== null);
    expect(accepted.length).toBe(37);
    expect(await repo.balance(key.id)).toBe(999);
    // Every hold settled twice at once and released once at once: only one close wins per hold.
    const closes = await Promise.all(accepted.flatMap((id) => [repo.settle(id, 400), repo.settle(id, 400), repo.release(id)]));
    expect(closes.filter((c) => c.closed).length).toBe(37);
    const charged = closes.reduce((s, c) => s + (c.closed ? c.chargedMicros : 0), 0);
    expect(await repo.balance(key.id)).toBe(37 * 1000 + 999 - charged);
    expect(await repo.heldCount(key.id)).toBe(0);
  });

  it('rolls back a whole batch when one unit fails, rejecting every unit, and keeps working', async () => {
    const key = await new KeysRepo(store.db).create({ name: 'g', keyHash: 'b'.repeat(64), keyPrefix: 'mg-', creditMicros: 5000 });
    const group = new GroupCommit(store.db);
    const take = (n: number) => group.run((trx) => trx.updateTable('api_keys').set({ credit_micros: sql`credit_micros - ${n}` }).where('id', '=', key.id).execute());
    const results = await Promise.allSettled([take(100), group.run(async (trx) => sql`select * from no_such_table`.execute(trx)), take(200)]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected']);
    const repo = new ReservationsRepo(store.db);
    expect(await repo.balance(key.id)).toBe(5000);
    await take(300);
    expect(await repo.balance(key.id)).toBe(4700);
  });
});

import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { freshDatabaseUrl, testDialect } from './helpers/databases.js';
import { openStore, type RawRead, type Store } from '../src/store/db.js';
import { KeysRepo } from '../src/store/repos/keys.js';

// The query-only connection's reads (a client's task read) made in one turn of the event loop share
// one read transaction. What must hold: a read never misses a write this process made before it
// (its own connection's or the worker's), and the snapshot never outlives the turn.
describe.skipIf(testDialect() !== 'sqlite')('SQLite reads grouped per turn of the event loop', () => {
  let db: Awaited<ReturnType<typeof freshDatabaseUrl>>;
  let store: Store;
  let other: Database.Database;
  let read: RawRead;
  let keyId: string;
  const nextTurn = () => new Promise<void>((r) => setImmediate(r));
  const credit = () => Number(read(keyId)?.[0]);
  // busy 1: a reader's snapshot kept the checkpoint from resetting the WAL (asked without waiting).
  const truncateBusy = () => {
    other.pragma('busy_timeout = 0');
    try {
      return (other.pragma('wal_checkpoint(TRUNCATE)') as Array<{ busy: number }>)[0].busy;
    } finally {
      other.pragma('busy_timeout = 5000');
    }
  };

  beforeEach(async () => {
    db = await freshDatabaseUrl();
    store = await openStore(db.url);
    const key = await new KeysRepo(store.db).create({ name: 't', keyHash: 'h-grouped', keyPrefix: 'mg-g', creditMicros: 1000 });
    keyId = key.id;
    read = store.readRaw!('select credit_micros from api_keys where id = ?');
    // A second process's connection (the CLI, say).
    other = new Database(db.url.slice('sqlite:'.length));
    other.pragma('busy_timeout = 5000');
  });
  afterEach(async () => {
    other.close();
    await store.close();
    await db.drop();
  });

  it("sees a write of this process's own connection made in the same turn", async () => {
    let turnEnded = false;
    setImmediate(() => (turnEnded = true));
    expect(credit()).toBe(1000);
    await store.db.updateTable('api_keys').set({ credit_micros: 900 }).where('id', '=', keyId).execute();
    // Still the same turn (only promises in between): the snapshot of the first read would show 1000.
    expect(turnEnded).toBe(false);
    expect(credit()).toBe(900);
  });

  it("sees a transaction of this process's connection once it committed", async () => {
    expect(credit()).toBe(1000);
    await store.db.transaction().execute(async (trx) => {
      await trx.updateTable('api_keys').set({ credit_micros: 800 }).where('id', '=', keyId).execute();
    });
    expect(credit()).toBe(800);
  });

  it("sees a batch of the worker's connection once it was written", async () => {
    expect(credit()).toBe(1000);
    await store.writeBatch([{ sql: 'update api_keys set credit_micros = ? where id = ?', parameters: [700, keyId] }]);
    expect(credit()).toBe(700);
  });

  it("shows another process's commit from the next turn on, and holds no snapshot past the turn", async () => {
    expect(credit()).toBe(1000);
    // The snapshot is held for the rest of the turn: a checkpoint that must reset the WAL cannot finish.
    other.prepare('update api_keys set credit_micros = 600 where id = ?').run(keyId);
    expect(credit()).toBe(1000);
    expect(truncateBusy()).toBe(1);
    await nextTurn();
    // The turn ended: no reader holds a snapshot, and the next read is a new one.
    expect(truncateBusy()).toBe(0);
    expect(credit()).toBe(600);
  });

  it('a read that fails leaves no snapshot behind', async () => {
    expect(credit()).toBe(1000);
    // Too few parameters: the statement fails when it runs, inside the shared snapshot.
    expect(() => read()).toThrow();
    other.prepare('update api_keys set credit_micros = 500 where id = ?').run(keyId);
    expect(credit()).toBe(500);
  });
});

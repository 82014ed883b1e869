import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../src/store/db.js';
import { KeysRepo } from '../src/store/repos/keys.js';
import { freshDatabaseUrl, testDialect } from './helpers/databases.js';

describe('the first key of an empty database', () => {
  const stores: Store[] = [];
  let drop: () => Promise<void>;
  let url: string;
  beforeEach(async () => {
    const db = await freshDatabaseUrl();
    drop = db.drop;
    url = db.url;
  });
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
    await drop();
  });

  it('is created once when several instances start together, and never when keys exist', async () => {
    // On PostgreSQL each "instance" has its own pool; SQLite is one process per database file.
    const count = testDialect() === 'postgres' ? 4 : 1;
    for (let i = 0; i < count; i++) stores.push(await openStore(url));
    const attempts = Array.from({ length: 8 }, (_, i) =>
      new KeysRepo(stores[i % count].db).createFirst({ name: 'default', keyHash: `${i}`.padStart(64, 'f'), keyPrefix: 'mg-' }, stores[0].dialect),
    );
    const created = (await Promise.all(attempts)).filter((r) => r !== null);
    expect(created).toHaveLength(1);
    expect(await new KeysRepo(stores[0].db).count()).toBe(1);
    expect(await new KeysRepo(stores[0].db).createFirst({ name: 'default', keyHash: 'e'.repeat(64), keyPrefix: 'mg-' }, stores[0].dialect)).toBeNull();
  });
});

import { afterEach, beforeEach } from 'vitest';
import { freshDatabaseUrl, testDialect } from './databases.js';
import { openStore, type Store } from '../../src/store/db.js';
import { KeysRepo } from '../../src/store/repos/keys.js';
import { ReservationsRepo } from '../../src/store/repos/reservations.js';
import { LeasesRepo } from '../../src/store/repos/leases.js';
import { CreditService } from '../../src/limits/credit.js';
import { LeaseBook, type LeaseOptions } from '../../src/limits/credit-lease.js';
import type { Principal } from '../../src/auth/principal.js';

/** Two instances' credit on one fresh database, remade for every test of the calling describe. */
export interface CreditInstances {
  stores: Store[];
  books: LeaseBook[];
  credits: CreditService[];
  /** A limited key with this balance. */
  keyWith(creditMicros: number): Promise<Principal>;
}

/**
 * Two LeaseBooks (each its own instance id) with a CreditService each: on PostgreSQL through two
 * stores (two pools), so draws and write-backs cross connections; on SQLite both on one store.
 */
export function creditInstances(options: LeaseOptions): CreditInstances {
  let db: Awaited<ReturnType<typeof freshDatabaseUrl>>;
  const t: CreditInstances = {
    stores: [],
    books: [],
    credits: [],
    async keyWith(creditMicros) {
      const row = await new KeysRepo(t.stores[0].db).create({ name: 't', keyHash: `h${Math.random()}`, keyPrefix: 'mg-x', creditMicros });
      return { keyId: row.id, name: 't', models: null, rpm: 0, concurrency: 0, limitedCredit: true };
    },
  };
  beforeEach(async () => {
    db = await freshDatabaseUrl();
    const first = await openStore(db.url);
    t.stores = [first, testDialect() === 'postgres' ? await openStore(db.url) : first];
    t.books = t.stores.map((s) => new LeaseBook(new LeasesRepo(s.db), options));
    t.credits = t.stores.map((s, i) => new CreditService(new ReservationsRepo(s.db), { book: t.books[i], repo: new LeasesRepo(s.db) }));
  });
  afterEach(async () => {
    for (const b of t.books) await b.close();
    for (const s of new Set(t.stores)) await s.close();
    await db.drop();
  });
  return t;
}

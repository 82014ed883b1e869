import { describe, expect, it } from 'vitest';
import { Authenticator } from '../../src/auth/authenticator.js';
import { generateApiKey, hashApiKey } from '../../src/auth/keys.js';
import type { ApiKeyRow, KeysRepo } from '../../src/store/repos/keys.js';

// The authenticator's cache of known keys: a known key is looked up once per TTL, a key unknown to
// the database is asked about every time (never cached), a revocation or expiry in the database is
// seen once the TTL has passed, the cache stays within its size, and requests that present a key
// while it is being looked up share that one lookup (its answer or its failure).

function rowFor(key: string, over: Partial<ApiKeyRow> = {}): ApiKeyRow {
  return {
    id: `key_${key.slice(3, 11)}`,
    name: 'k',
    key_hash: hashApiKey(key),
    key_prefix: key.slice(0, 9),
    models: null,
    rpm: 0,
    concurrency: 0,
    credit_micros: null,
    overage_micros: 0,
    expires_at: null,
    revoked_at: null,
    created_at: 0,
    project_id: null,
    budget_micros: null,
    budget_period: null,
    ...over,
  };
}

/** A keys repository over a map of rows by hash, counting lookups. */
function repo(rows: ApiKeyRow[]) {
  const byHash = new Map(rows.map((r) => [r.key_hash, r]));
  const fake = {
    lookups: 0,
    byHash,
    findByHash: async (hash: string) => {
      fake.lookups++;
      return byHash.get(hash);
    },
  };
  return fake;
}

/** Lookups read the row when they are made and answer once the returned function is called. */
function holdLookups(r: ReturnType<typeof repo>): () => void {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const find = r.findByHash;
  r.findByHash = async (hash: string) => {
    const row = await find(hash);
    await gate;
    return row;
  };
  return open;
}

describe('Authenticator cache', () => {
  it('looks a known key up once per TTL and serves it from the cache meanwhile', async () => {
    const key = generateApiKey();
    const r = repo([rowFor(key)]);
    const auth = new Authenticator(r as unknown as KeysRepo, 1000);
    expect((await auth.authenticate(key, 0))?.keyId).toBe(rowFor(key).id);
    expect(await auth.authenticate(key, 500)).toMatchObject({ keyId: rowFor(key).id });
    expect(r.lookups).toBe(1);
    expect((await auth.authenticate(key, 1500))?.keyId).toBe(rowFor(key).id);
    expect(r.lookups).toBe(2);
  });

  it('asks the database about an unknown key every time, and refuses malformed keys without asking', async () => {
    const r = repo([]);
    const auth = new Authenticator(r as unknown as KeysRepo, 1000);
    const unknown = generateApiKey();
    expect(await auth.authenticate(unknown, 0)).toBeNull();
    expect(await auth.authenticate(unknown, 1)).toBeNull();
    expect(r.lookups).toBe(2);
    expect(await auth.authenticate('mg-short', 2)).toBeNull();
    expect(await auth.authenticate(`sk-${'a'.repeat(48)}`, 2)).toBeNull();
    expect(await auth.authenticate(undefined, 2)).toBeNull();
    expect(r.lookups).toBe(2);
  });

  it('sees a revocation or an expiry made in the database once the TTL has passed, and an expiry at once', async () => {
    const a = generateApiKey();
    const b = generateApiKey();
    const r = repo([rowFor(a), rowFor(b, { expires_at: 2500 })]);
    const auth = new Authenticator(r as unknown as KeysRepo, 1000);
    expect(await auth.authenticate(a, 0)).not.toBeNull();
    expect(await auth.authenticate(b, 0)).not.toBeNull();
    r.byHash.set(hashApiKey(a), rowFor(a, { revoked_at: 100 }));
    expect(await auth.authenticate(a, 1001)).toBeNull();
    expect(await auth.authenticate(b, 2000)).not.toBeNull();
    // Cached at 2000 until 3000, but expired at 2500.
    expect(await auth.authenticate(b, 2600)).toBeNull();
  });

  it('forgets everything on invalidate() and keeps at most maxEntries keys', async () => {
    const keys = Array.from({ length: 5 }, () => generateApiKey());
    const r = repo(keys.map((k) => rowFor(k)));
    const auth = new Authenticator(r as unknown as KeysRepo, 1000, 3);
    for (const k of keys) await auth.authenticate(k, 0);
    expect((auth as unknown as { cache: Map<string, unknown> }).cache.size).toBeLessThanOrEqual(3);
    const before = r.lookups;
    await auth.authenticate(keys[4], 1);
    expect(r.lookups).toBe(before);
    auth.invalidate();
    await auth.authenticate(keys[4], 2);
    expect(r.lookups).toBe(before + 1);
  });

  it('makes one database lookup for requests that present an uncached key at the same time', async () => {
    const key = generateApiKey();
    const r = repo([rowFor(key)]);
    const open = holdLookups(r);
    const auth = new Authenticator(r as unknown as KeysRepo, 1000);
    const waiting = Array.from({ length: 20 }, () => auth.authenticate(key, 0));
    open();
    const found = await Promise.all(waiting);
    expect(found.map((p) => p?.keyId)).toEqual(Array(20).fill(rowFor(key).id));
    expect(r.lookups).toBe(1);
    // Once it is settled, the next miss (after the TTL) asks again.
    expect((await auth.authenticate(key, 1500))?.keyId).toBe(rowFor(key).id);
    expect(r.lookups).toBe(2);
  });

  it('shares a failed lookup with its waiters and asks again afterwards', async () => {
    const key = generateApiKey();
    const r = repo([rowFor(key)]);
    const find = r.findByHash;
    let failNext = true;
    r.findByHash = async (hash: string) => {
      if (failNext) {
        failNext = false;
        r.lookups++;
        throw Object.assign(new Error('database down'), { code: 'database_unavailable' });
      }
      return find(hash);
    };
    const auth = new Authenticator(r as unknown as KeysRepo, 1000);
    const both = [auth.authenticate(key, 0), auth.authenticate(key, 0)];
    for (const p of both) await expect(p).rejects.toThrow('database down');
    expect(r.lookups).toBe(1);
    expect((await auth.authenticate(key, 1))?.keyId).toBe(rowFor(key).id);
    expect(r.lookups).toBe(2);
  });

  it('does not cache what a lookup under way at invalidate() found', async () => {
    const key = generateApiKey();
    const r = repo([rowFor(key)]);
    const find = r.findByHash;
    const open = holdLookups(r);
    const auth = new Authenticator(r as unknown as KeysRepo, 1000);
    const first = auth.authenticate(key, 0);
    // Revoked in this process while the lookup runs (the row it reads predates the revoke).
    auth.invalidate();
    r.byHash.set(hashApiKey(key), rowFor(key, { revoked_at: 1 }));
    r.findByHash = find;
    open();
    expect((await first)?.keyId).toBe(rowFor(key).id);
    expect(await auth.authenticate(key, 2)).toBeNull();
    expect(r.lookups).toBe(2);
  });
});

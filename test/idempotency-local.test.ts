import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { freshDatabaseUrl } from './helpers/databases.js';
import { openStore, type Store } from '../src/store/db.js';
import { IdempotencyRepo } from '../src/store/repos/idempotency.js';
import { UsageRepo } from '../src/store/repos/usage.js';
import { UsageLedger } from '../src/limits/ledger.js';
import { LocalClaims } from '../src/pipeline/idempotency.js';

// Idempotency-Key claims held in one process's memory (the gateway does this on a SQLite file): a
// kept answer is written in the usage ledger's batch together with its request's row, and once
// written it is what a later process (a restart) replays.

describe('idempotency claims in memory, answers kept with the ledger row', () => {
  let db: Awaited<ReturnType<typeof freshDatabaseUrl>>;
  let store: Store;
  let repo: IdempotencyRepo;
  let ledger: UsageLedger;
  const errors: unknown[] = [];

  beforeEach(async () => {
    db = await freshDatabaseUrl();
    store = await openStore(db.url);
    repo = new IdempotencyRepo(store.db, { readRaw: store.readRaw });
    // A long timer: the test decides when a batch is written.
    ledger = new UsageLedger(new UsageRepo(store.db, store.withoutLockWait, store.writeBatch), (err) => errors.push(err), 60_000);
  });
  afterEach(async () => {
    await ledger.close();
    await store.close();
    await db.drop();
  });

  const now = Date.now();
  const claim = (claims: LocalClaims, owner: string, fingerprint = 'f1', idemKey = 'k1') => claims.claim({ keyId: 'key_a', idemKey, fingerprint, owner, now, expiresAt: now + 60_000, leaseUntil: now + 30_000 });
  const stored = () => store.db.selectFrom('idempotency_keys').selectAll().execute();
  const usage = () => store.db.selectFrom('usage').selectAll().execute();
  const row = { key_id: 'key_a', model: 'm', channel: 'c', endpoint: 'chat', status: 200, input_units: 1, output_units: 2, cost_micros: 3, overage_micros: 0, latency_ms: 4 };

  it('answers repeats from memory, writes the answer only in the batch with its row, and replays it after a restart', async () => {
    const claims = new LocalClaims(repo, ledger);
    expect(await claim(claims, 'a')).toEqual({ kind: 'claimed' });
    expect(await claim(claims, 'b')).toEqual({ kind: 'running' });
    expect(await claim(claims, 'b', 'f2')).toEqual({ kind: 'reused' });

    let recorded = false;
    await claims.complete('key_a', 'k1', 'a', { status: 200, headers: { 'content-type': 'application/json' }, body: Buffer.from('{"ok":1}') }, () => recorded);
    const replay = await claim(claims, 'c');
    expect(replay.kind === 'done' && replay.answer.body.toString()).toBe('{"ok":1}');
    // The request's row is not in the ledger yet: the answer waits for it.
    await ledger.flush();
    expect(await stored()).toHaveLength(0);
    ledger.record(row);
    recorded = true;
    await ledger.flush();
    expect(await usage()).toHaveLength(1);
    expect((await stored()).map((r) => [r.key_id, r.idem_key, r.state, r.status, Buffer.from(r.body!).toString()])).toEqual([['key_a', 'k1', 'done', 200, '{"ok":1}']]);

    // A new process: nothing in memory, the stored answer replays; another body is still 422.
    const restarted = new LocalClaims(repo, ledger);
    const again = await claim(restarted, 'd');
    expect(again).toMatchObject({ kind: 'done', answer: { status: 200, headers: { 'content-type': 'application/json' } } });
    expect(await claim(restarted, 'd', 'f2')).toEqual({ kind: 'reused' });
    expect(errors).toEqual([]);
  });

  it('a released claim frees its key; a running claim dies with its process, so a retry there runs anew', async () => {
    const claims = new LocalClaims(repo, ledger);
    expect(await claim(claims, 'a', 'f1', 'k2')).toEqual({ kind: 'claimed' });
    await claims.release('key_a', 'k2', 'a');
    expect(await claim(claims, 'b', 'other', 'k2')).toEqual({ kind: 'claimed' });
    // Nothing of a running claim is stored: another process claims it at once.
    expect(await claim(new LocalClaims(repo, ledger), 'c', 'f1', 'k2')).toEqual({ kind: 'claimed' });
    expect(await stored()).toHaveLength(0);
  });

  it('an answer whose row never comes is written on its own after a while, and at shutdown', async () => {
    const claims = new LocalClaims(repo, ledger);
    await claim(claims, 'a', 'f1', 'k3');
    await claims.complete('key_a', 'k3', 'a', { status: 404, headers: {}, body: Buffer.from('no') }, () => false);
    await ledger.close();
    expect((await stored()).map((r) => r.idem_key)).toEqual(['k3']);
    expect(await usage()).toHaveLength(0);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import BetterSqlite from 'better-sqlite3';
import { startGateway, type TestGateway } from './helpers/gateway.js';
import { freshDatabaseUrl, testDialect } from './helpers/databases.js';
import { startPausableProxy, type PausableProxy } from './helpers/pausable-proxy.js';
import { errorShapeProblem } from './helpers/error-shapes.js';
import { eventually } from './helpers/eventually.js';

// A database that accepts connections but answers nothing (PostgreSQL behind a proxy that stops
// forwarding), and a SQLite file whose write lock another process holds: the gateway answers 503
// in the family's shape within bounded time instead of hanging, and recovers when the database does.

async function timed(url: string, init: RequestInit = {}): Promise<{ status: number; ms: number; body: unknown }> {
  const t0 = Date.now();
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(15_000) });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // plain text
  }
  return { status: res.status, ms: Date.now() - t0, body };
}

const chatBody = JSON.stringify({ model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }], max_tokens: 16 });
const chat = (gw: TestGateway, key: string) => timed(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: chatBody });
const video = (gw: TestGateway, key: string) =>
  timed(`${gw.url}/v1/video/generations`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'sim-video', prompt: 'a corgi' }) });

describe.skipIf(testDialect() !== 'postgres')('a hung PostgreSQL', () => {
  let db: Awaited<ReturnType<typeof freshDatabaseUrl>>;
  let proxy: PausableProxy;
  let gw: TestGateway;
  let key: string;

  beforeAll(async () => {
    db = await freshDatabaseUrl('postgres');
    const real = new URL(db.url);
    proxy = await startPausableProxy(real.hostname, Number(real.port || 5432));
    const via = new URL(db.url);
    via.port = String(proxy.port);
    // Leases off: this suite pins what a request does when its credit move needs the database.
    gw = await startGateway({ database: { url: via.toString(), connect_timeout_ms: 1000, statement_timeout_ms: 800, query_timeout_ms: 1000 }, limits: { credit_leases: false } });
    // A limited key: every request moves its balance, so it needs the database.
    key = (await gw.createKey({ creditMicros: 10_000_000 })).key;
  });

  afterAll(async () => {
    proxy?.resume();
    await gw?.close();
    await proxy?.close();
    await db?.drop();
  });

  it('answers /readyz 503 within 2 s, fails requests fast with 503, and recovers quickly', async () => {
    expect((await chat(gw, key)).status).toBe(200);
    expect((await timed(`${gw.url}/readyz`)).status).toBe(200);

    proxy.pause();
    const ready = await timed(`${gw.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(ready.ms).toBeLessThan(2000);

    // Marked down by that probe: requests no longer wait for the database at all.
    for (const call of [chat, video]) {
      const r = await call(gw, key);
      expect(r.status).toBe(503);
      expect(r.ms).toBeLessThan(500);
    }
    const c = await chat(gw, key);
    expect(errorShapeProblem('openai', c.body)).toBeNull();
    expect((c.body as { error: { code: string } }).error.code).toBe('database_unavailable');
    const v = await video(gw, key);
    expect(errorShapeProblem('video', v.body)).toBeNull();

    proxy.resume();
    const t0 = Date.now();
    await eventually(async () => (await chat(gw, key)).status === 200, 10_000, 'a chat answered after the database returned');
    expect(Date.now() - t0).toBeLessThan(3000);
    expect((await timed(`${gw.url}/readyz`)).status).toBe(200);
  });

  it('bounds a request that meets the hang first by the query timeout', async () => {
    // The key cache may hold the key; the credit hold still needs the database.
    proxy.pause();
    try {
      const r = await chat(gw, key);
      expect(r.status).toBe(503);
      expect(r.ms).toBeLessThan(3000);
      // The next one is refused at once: the timeout marked the database down.
      const next = await chat(gw, key);
      expect(next.status).toBe(503);
      expect(next.ms).toBeLessThan(500);
    } finally {
      proxy.resume();
    }
    await eventually(async () => (await chat(gw, key)).status === 200, 10_000, 'recovery');
  });
});

describe.skipIf(testDialect() !== 'sqlite')('a locked SQLite file', () => {
  let gw: TestGateway;
  let key: string;

  beforeAll(async () => {
    gw = await startGateway({ limits: { credit_leases: false } });
    key = (await gw.createKey({ creditMicros: 10_000_000 })).key;
  });

  afterAll(async () => {
    await gw?.close();
  });

  it('answers 503 after the bounded busy wait while another process holds the write lock, then serves again', async () => {
    expect((await chat(gw, key)).status).toBe(200);
    const file = gw.config.database.url.slice('sqlite:'.length);
    const other = new BetterSqlite(file);
    other.exec('BEGIN IMMEDIATE');
    try {
      const r = await chat(gw, key);
      expect(r.status).toBe(503);
      expect(errorShapeProblem('openai', r.body)).toBeNull();
      expect((r.body as { error: { code: string } }).error.code).toBe('database_unavailable');
      // The request's own bounded wait (1 s); the ledger's flush of the refusal's row meets the
      // same lock but never waits for it (the client shares the event loop, so it would show here).
      expect(r.ms).toBeLessThan(3000);
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    expect((await chat(gw, key)).status).toBe(200);
    // The refusal's ledger row, kept while the lock was held, is written once the lock is gone.
    await eventually(async () => (await gw.services.store.db.selectFrom('usage').select('id').where('status', '=', 503).execute()).length === 1, 10_000, "the 503's ledger row");
    await new Promise((r) => setTimeout(r, 1500));
    expect(await gw.services.store.db.selectFrom('usage').select('id').where('status', '=', 503).execute()).toHaveLength(1);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { tempDir } from './helpers/gateway.js';
import { freshDatabaseUrl, PG_ADMIN_URL } from './helpers/databases.js';
import { spawnGateway, type GatewayProcess } from './helpers/gateway-process.js';
import { errorShapeProblem } from './helpers/error-shapes.js';
import { eventually } from './helpers/eventually.js';
import { openStore, type Store } from '../src/store/db.js';
import { KeysRepo } from '../src/store/repos/keys.js';
import { generateApiKey, hashApiKey, displayPrefix } from '../src/auth/keys.js';
import { SIMULATOR_MODELS } from '../src/config-file/defaults.js';
import type { Family } from '../src/http/errors.js';

// A PostgreSQL restart or failover, simulated by terminating every backend of the gateway's own
// test database (pg_terminate_backend) again and again while requests run. The gateway runs as a
// child process so "the process survives" is observable. PostgreSQL only (vitest.config.ts).

// Far more than the load can spend in its at most 60 s (a video create holds $0.2448): the test is
// about the database under fire, not about a key running dry ($50 ran out once the gateway answered faster).
const CREDIT = 50_000_000_000;

describe('PostgreSQL backends terminated under load', () => {
  const dir = tempDir('mediagate-pgkill-');
  let db: Awaited<ReturnType<typeof freshDatabaseUrl>>;
  let store: Store;
  let gw: GatewayProcess;
  let key: { id: string; key: string };
  const dbName = () => new URL(db.url).pathname.slice(1);

  beforeAll(async () => {
    db = await freshDatabaseUrl('postgres');
    store = await openStore(db.url, { warn: () => undefined });
    const file = join(dir.path, 'gw.yaml');
    writeFileSync(
      file,
      JSON.stringify({
        server: { host: '127.0.0.1', port: 0 },
        database: { url: db.url },
        log: { level: 'warn' },
        // Leases off: every request moves the balance in the database, which is what is under fire here.
        limits: { credit_leases: false },
        simulator: { embedded: true, video_seconds: 0.5 },
        tasks: { poll_interval_ms: 100, tick_ms: 50 },
        channels: [{ name: 'simulator', type: 'simulator', models: ['sim-chat', 'sim-claude', 'sim-video'] }],
        models: { 'sim-chat': SIMULATOR_MODELS['sim-chat'], 'sim-claude': SIMULATOR_MODELS['sim-claude'], 'sim-video': SIMULATOR_MODELS['sim-video'] },
      }),
    );
    const raw = generateApiKey();
    const row = await new KeysRepo(store.db).create({ name: 'pgkill', keyHash: hashApiKey(raw), keyPrefix: displayPrefix(raw), creditMicros: CREDIT });
    key = { id: row.id, key: raw };
    gw = await spawnGateway(file);
  }, 40_000);

  afterAll(async () => {
    await gw?.stop();
    await store?.close();
    await db?.drop();
    dir.remove();
  });

  async function terminateBackends(): Promise<number> {
    const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
    await admin.connect();
    try {
      const r = await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [dbName()]);
      return r.rowCount ?? 0;
    } finally {
      await admin.end();
    }
  }

  type Shot = { family: Family; status: number; body: unknown };
  const shots: Shot[] = [];

  async function call(family: Family, path: string, body: unknown): Promise<void> {
    try {
      const res = await fetch(`${gw.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        // kept as text: the shape check below reports it
      }
      shots.push({ family, status: res.status, body: parsed });
    } catch (err) {
      // A connection reset means the process died or dropped the request: recorded as status 0.
      shots.push({ family, status: 0, body: String(err) });
    }
  }

  it('survives, answers 503 in each family shape, reconnects, and keeps the books whole', async () => {
    let running = true;
    let kills = 0;
    const killer = (async () => {
      while (running) {
        kills += (await terminateBackends()) > 0 ? 1 : 0;
        await new Promise((r) => setTimeout(r, 120));
      }
    })();
    const worker = async (i: number) => {
      while (running) {
        if (i % 3 === 0) await call('openai', '/v1/chat/completions', { model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }], max_tokens: 16 });
        else if (i % 3 === 1) await call('anthropic', '/v1/messages', { model: 'sim-claude', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] });
        else await call('video', '/v1/video/generations', { model: 'sim-video', prompt: 'a corgi', duration: 5 });
      }
    };
    const workers = Array.from({ length: 12 }, (_, i) => worker(i));
    // At least 5 s of load and at least 12 rounds of terminations, however slow the machine is
    // (a fixed 5 s saw only 7 rounds at load average 12).
    const started = Date.now();
    while ((Date.now() - started < 5000 || kills < 12) && Date.now() - started < 60_000) await new Promise((r) => setTimeout(r, 100));
    running = false;
    await Promise.all([killer, ...workers]);

    // The process is alive and was never left without an answer.
    expect(gw.stderr()).not.toMatch(/Unhandled 'error' event/);
    expect(gw.proc.exitCode).toBeNull();
    expect(kills).toBeGreaterThan(10);
    expect(shots.filter((s) => s.status === 0)).toEqual([]);
    // Every answer is a success or a 503 in its family's error shape; no 500.
    const bad = shots.filter((s) => s.status !== 200 && s.status !== 503);
    expect(bad.map((s) => `${s.status} ${JSON.stringify(s.body).slice(0, 200)}`)).toEqual([]);
    for (const s of shots.filter((x) => x.status === 503)) expect(errorShapeProblem(s.family, s.body)).toBeNull();
    expect(shots.filter((s) => s.status === 503).length).toBeGreaterThan(0);

    // The pool reconnects: the next requests succeed and /readyz is ready again.
    await eventually(async () => (await fetch(`${gw.url}/readyz`)).status === 200, 5000, '/readyz 200');
    const after = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }], max_tokens: 16 }),
    });
    expect(after.status).toBe(200);

    // Nothing settled twice, no money created or lost: balance + open holds + charges = the credit.
    await eventually(
      async () => {
        const sums = await store.db
          .selectFrom('reservations')
          .select((eb) => [
            eb.fn.sum<string>(eb.case().when('state', '=', 'held').then(eb.ref('amount_micros')).else(0).end()).as('held'),
            eb.fn.sum<string>('charged_micros').as('charged'),
          ])
          .where('key_id', '=', key.id)
          .executeTakeFirstOrThrow();
        const balance = Number((await store.db.selectFrom('api_keys').select('credit_micros').where('id', '=', key.id).executeTakeFirstOrThrow()).credit_micros);
        return balance + Number(sums.held ?? 0) + Number(sums.charged ?? 0) === CREDIT;
      },
      5000,
      'credit conservation',
    );
    // No answered chat request lost its ledger row (the ledger retries a batch the database dropped).
    const okChats = shots.filter((s) => s.status === 200 && s.family !== 'video').length + 1;
    await eventually(
      async () => {
        const n = await store.db
          .selectFrom('usage')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .where('key_id', '=', key.id)
          .where('status', '=', 200)
          .where('endpoint', 'in', ['chat', 'messages'])
          .executeTakeFirstOrThrow();
        return Number(n.n) === okChats;
      },
      8000,
      `${okChats} ledger rows of answered chats`,
    );
  }, 120_000);
});

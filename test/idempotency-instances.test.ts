import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from './helpers/gateway.js';
import { freshDatabaseUrl } from './helpers/databases.js';
import { freshRedisPrefix } from './helpers/redis.js';
import { spawnGateway, type GatewayProcess } from './helpers/gateway-process.js';
import { eventually } from './helpers/eventually.js';
import { startSimulator, type Simulator } from '../src/simulator/server.js';
import { openStore, type Store } from '../src/store/db.js';
import { KeysRepo } from '../src/store/repos/keys.js';
import { generateApiKey, hashApiKey, displayPrefix } from '../src/auth/keys.js';
import { SIMULATOR_MODELS } from '../src/config-file/defaults.js';

// The same Idempotency-Key sent to two `mediagate serve` processes at the same moment (one
// PostgreSQL database, one Redis): the claim in the database lets exactly one of them call the
// upstream; the other waits and answers with the first answer. One upstream call, one hold, one
// ledger row. PostgreSQL only (vitest.config.ts): several processes on one SQLite file is not a
// supported deployment.

describe('Idempotency-Key across two gateway instances', () => {
  const dir = tempDir('mediagate-idem-');
  const redis = freshRedisPrefix();
  let db: Awaited<ReturnType<typeof freshDatabaseUrl>>;
  let sim: Simulator;
  let store: Store;
  let a: GatewayProcess;
  let b: GatewayProcess;

  beforeAll(async () => {
    db = await freshDatabaseUrl('postgres');
    sim = await startSimulator({ videoSeconds: 1 });
    const config = JSON.stringify({
      server: { host: '127.0.0.1', port: 0 },
      database: { url: db.url },
      redis: redis.config,
      log: { level: 'warn' },
      channels: [{ name: 'simulator', type: 'simulator', base_url: sim.url, api_key: 'sim-upstream-key-1234', models: ['sim-chat', 'sim-video'] }],
      models: { 'sim-chat': SIMULATOR_MODELS['sim-chat'], 'sim-video': SIMULATOR_MODELS['sim-video'] },
    });
    writeFileSync(join(dir.path, 'a.yaml'), config);
    writeFileSync(join(dir.path, 'b.yaml'), config);
    [a, b] = await Promise.all([spawnGateway(join(dir.path, 'a.yaml')), spawnGateway(join(dir.path, 'b.yaml'))]);
    store = await openStore(db.url, { migrate: false });
  }, 60_000);

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await store?.close();
    await sim?.close();
    await db?.drop();
    await redis.cleanup();
    dir.remove();
  });

  async function createKey(creditMicros: number): Promise<{ id: string; key: string }> {
    const key = generateApiKey();
    const row = await new KeysRepo(store.db).create({ name: 'idem', keyHash: hashApiKey(key), keyPrefix: displayPrefix(key), creditMicros });
    return { id: row.id, key };
  }

  const send = (base: string, path: string, key: string, idem: string, body: unknown) =>
    fetch(`${base}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': idem },
      body: JSON.stringify(body),
    }).then(async (r) => ({ status: r.status, replayed: r.headers.get('idempotent-replayed'), text: await r.text() }));

  const calls = async (name: string) => {
    const stats = (await (await fetch(`${sim.url}/__sim/stats`)).json()) as { counts: Record<string, number> };
    return stats.counts[name] ?? 0;
  };

  const slow = (match: string, ms: number) =>
    fetch(`${sim.url}/__sim/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ kind: 'latency', ms, match }) });

  it('a video create sent to both at once: one task, one hold, one create row, the same answer', async () => {
    const { id, key } = await createKey(50_000_000);
    await slow('ark.video.create', 800);
    const before = await calls('ark.video.create');
    const body = { model: 'sim-video', prompt: 'a corgi on a skateboard' };
    const [x, y] = await Promise.all([send(a.url, '/v1/video/generations', key, 'video-1', body), send(b.url, '/v1/video/generations', key, 'video-1', body)]);
    expect([x.status, y.status]).toEqual([200, 200]);
    expect([x.replayed, y.replayed].sort()).toEqual([null, 'true'].sort());
    expect(JSON.parse(x.text).data.task_id).toBe(JSON.parse(y.text).data.task_id);
    expect(await calls('ark.video.create')).toBe(before + 1);
    const tasks = await store.db.selectFrom('tasks').select(['task_id', 'reservation_id']).where('key_id', '=', id).execute();
    expect(tasks).toHaveLength(1);
    const holds = await store.db.selectFrom('reservations').select('id').where('key_id', '=', id).execute();
    expect(holds).toHaveLength(1);
    const rows = await eventually(async () => {
      const r = await store.db.selectFrom('usage').select(['endpoint']).where('key_id', '=', id).where('endpoint', '=', 'video').execute();
      return r.length ? r : undefined;
    }, 10_000, 'the create row');
    expect(rows).toHaveLength(1);
  });

  it('a chat completion sent to both at once: one upstream call, one ledger row, the same answer', async () => {
    const { id, key } = await createKey(1_000_000);
    await slow('openai.chat', 800);
    const before = await calls('openai.chat');
    const body = { model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }] };
    const [x, y] = await Promise.all([send(a.url, '/v1/chat/completions', key, 'chat-1', body), send(b.url, '/v1/chat/completions', key, 'chat-1', body)]);
    expect([x.status, y.status]).toEqual([200, 200]);
    expect([x.replayed, y.replayed].sort()).toEqual([null, 'true'].sort());
    expect(x.text).toBe(y.text);
    expect(await calls('openai.chat')).toBe(before + 1);
    // Stopped gracefully, each instance writes what its ledger buffered: then every row is in.
    await Promise.all([a.stop(), b.stop()]);
    const rows = await store.db.selectFrom('usage').select(['status', 'cost_micros']).where('key_id', '=', id).execute();
    expect(rows).toHaveLength(1);
    expect(rows[0].status).toBe(200);
  });
});

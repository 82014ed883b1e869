import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { tempDir } from './helpers/gateway.js';
import { freshDatabaseUrl } from './helpers/databases.js';
import { freshRedisPrefix } from './helpers/redis.js';
import { spawnGateway, type GatewayProcess } from './helpers/gateway-process.js';
import { eventually } from './helpers/eventually.js';
import { simFault } from './helpers/video.js';
import { startSimulator, type Simulator } from '../src/simulator/server.js';
import { openStore, type Store } from '../src/store/db.js';
import { KeysRepo } from '../src/store/repos/keys.js';
import { createAdminAccess } from '../src/admin/index.js';
import { generateApiKey, hashApiKey, displayPrefix } from '../src/auth/keys.js';
import { SIMULATOR_MODELS } from '../src/config-file/defaults.js';

// Two `mediagate serve` processes on one PostgreSQL database: a channel added, switched off and on
// through one instance's admin API is in force on both within 2 s (the Redis message; the second
// instance is restarted without Redis, where the once-a-second re-read alone carries changes), and
// survives a restart. Its credential appears in no answer, no output and no stored row in clear.

const SECRET_KEY = randomBytes(32).toString('base64');
const CREDENTIAL = `sk-multi-${randomBytes(12).toString('hex')}`;

describe('channels at runtime across two instances', () => {
  const dir = tempDir('mediagate-channels-multi-');
  const redis = freshRedisPrefix();
  let db: Awaited<ReturnType<typeof freshDatabaseUrl>>;
  let sim: Simulator;
  let store: Store;
  let a: GatewayProcess;
  let b: GatewayProcess;
  let token: string;
  let key: string;
  const files = { a: join(dir.path, 'a.yaml'), b: join(dir.path, 'b.yaml'), bNoRedis: join(dir.path, 'b-no-redis.yaml') };
  const env = { MEDIAGATE_SECRET_KEY: SECRET_KEY };

  const configText = (withRedis: boolean) =>
    JSON.stringify({
      server: { host: '127.0.0.1', port: 0 },
      database: { url: db.url },
      ...(withRedis ? { redis: redis.config } : {}),
      admin: { enabled: true },
      log: { level: 'info' },
      // Health alone decides (no breaker); quick probes.
      relay: { breaker_failures: 1000, health: { min_requests: 4, error_rate: 0.5, probe_initial_ms: 300, probe_max_ms: 600 } },
      channels: [{ name: 'file-sim', type: 'simulator', base_url: sim.url, models: ['sim-chat'] }],
      // rt-chat is served by no channel of the file: only by the one added at runtime.
      models: { 'sim-chat': SIMULATOR_MODELS['sim-chat'], 'rt-chat': { kind: 'chat', owned_by: 'runtime' } },
    });

  const admin = (gw: GatewayProcess, method: string, path: string, body?: unknown) =>
    fetch(`${gw.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    }).then(async (r) => ({ status: r.status, text: await r.text() }));

  const chat = (gw: GatewayProcess) =>
    fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'rt-chat', messages: [{ role: 'user', content: 'hi' }] }),
    }).then(async (r) => ({ status: r.status, text: await r.text() }));

  /** Waits at most 2 s for every instance's answer to the model to have `status`. */
  const onBothWithin2s = (status: number, what: string) =>
    eventually(async () => (await Promise.all([chat(a), chat(b)])).every((r) => r.status === status), 2000, what);

  beforeAll(async () => {
    db = await freshDatabaseUrl('postgres');
    sim = await startSimulator({ videoSeconds: 1 });
    writeFileSync(files.a, configText(true));
    writeFileSync(files.b, configText(true));
    writeFileSync(files.bNoRedis, configText(false));
    [a, b] = await Promise.all([spawnGateway(files.a, env), spawnGateway(files.b, env)]);
    store = await openStore(db.url, { migrate: false });
    token = (await createAdminAccess({ store }).create('tester')).secret;
    key = generateApiKey();
    await new KeysRepo(store.db).create({ name: 'multi', keyHash: hashApiKey(key), keyPrefix: displayPrefix(key) });
  }, 60_000);

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await store?.close();
    await sim?.close();
    await db?.drop();
    await redis.cleanup();
    dir.remove();
  }, 30_000);

  const answers: string[] = [];

  it('a channel added through one instance serves its model on both within 2 s', async () => {
    expect((await chat(b)).status).toBe(404);
    const made = await admin(a, 'POST', '/admin/api/channels', { name: 'rt', type: 'simulator', base_url: sim.url, api_key: CREDENTIAL, models: ['rt-chat'], model_map: { 'rt-chat': 'sim-chat' } });
    answers.push(made.text);
    expect(made.status, made.text).toBe(201);
    await onBothWithin2s(200, 'rt-chat served by both instances');
    const listed = await admin(b, 'GET', '/admin/api/channels/rt');
    answers.push(listed.text);
    expect(JSON.parse(listed.text)).toMatchObject({ name: 'rt', source: 'api', api_key: 'set' });
  });

  it('disabled, its model answers "no available channel" on both within 2 s; enabled, it serves again', async () => {
    const off = await admin(b, 'PATCH', '/admin/api/channels/rt', { enabled: false });
    answers.push(off.text);
    expect(off.status).toBe(200);
    await onBothWithin2s(404, 'rt-chat refused by both instances');
    const refused = await chat(a);
    expect(JSON.parse(refused.text).error.message).toMatch(/no available channel/);
    answers.push((await admin(a, 'PATCH', '/admin/api/channels/rt', { enabled: true })).text);
    await onBothWithin2s(200, 'rt-chat served again by both instances');
  });

  it('survives a restart; without Redis the re-read alone carries a change within 2 s', async () => {
    await b.stop();
    b = await spawnGateway(files.bNoRedis, env);
    expect((await chat(b)).status).toBe(200);
    answers.push((await admin(a, 'PATCH', '/admin/api/channels/rt', { enabled: false })).text);
    await onBothWithin2s(404, 'rt-chat refused by both instances (b without Redis)');
    answers.push((await admin(a, 'DELETE', '/admin/api/channels/rt')).text);
  });

  it('a channel failing across both instances is taken out on both by the summed counts, and put back by its probe', async () => {
    // b runs without Redis since the restart: start it again with Redis.
    await b.stop();
    b = await spawnGateway(files.b, env);
    const simChat = (gw: GatewayProcess) =>
      fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }] }),
      }).then((r) => r.status);
    const health = async (gw: GatewayProcess) => JSON.parse((await admin(gw, 'GET', '/admin/api/channels/file-sim')).text).health;
    await simFault(sim.url, { match: 'openai.models', kind: 'status', status: 503, count: 1000 });
    await simFault(sim.url, { match: 'openai.chat', kind: 'status', status: 500, count: 4 });
    // Two failures each: under min_requests on either instance alone, at it summed.
    for (const gw of [a, b, a, b]) expect(await simChat(gw)).toBe(502);
    await eventually(async () => (await health(a)).state === 'out' && (await health(b)).state === 'out', 5000, 'file-sim out on both instances');
    for (const gw of [a, b]) expect(await health(gw)).toMatchObject({ instance: { errors: 2 }, cluster: { errors: 4 } });
    expect(await simChat(a)).toBe(503);
    await fetch(`${sim.url}/__sim/faults`, { method: 'DELETE' });
    await eventually(async () => (await health(a)).state === 'in_rotation' && (await health(b)).state === 'in_rotation', 5000, 'file-sim back on both instances');
    expect(await simChat(a)).toBe(200);
    expect(await simChat(b)).toBe(200);
  });

  it('never shows the credential: answers, output, the stored row', async () => {
    const row = await store.db.selectFrom('channels').selectAll().where('name', '=', 'rt').executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(CREDENTIAL);
    for (const gw of [a, b]) {
      for (const path of ['/admin/api/channels', '/admin/api/config', '/admin/api/audit?limit=100']) answers.push((await admin(gw, 'GET', path)).text);
      expect(gw.stdout() + gw.stderr()).not.toContain(CREDENTIAL);
    }
    for (const text of answers) expect(text).not.toContain(CREDENTIAL);
  });
});

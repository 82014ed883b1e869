import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from './helpers/gateway.js';
import { freshDatabaseUrl } from './helpers/databases.js';
import { freshRedisPrefix } from './helpers/redis.js';
import { spawnGateway, runCli, type GatewayProcess } from './helpers/gateway-process.js';
import { createTask, readTask, eventually, simFault, simVideoStats } from './helpers/video.js';
import { startSimulator, type Simulator } from '../src/simulator/server.js';
import { openStore, type Store } from '../src/store/db.js';
import { KeysRepo } from '../src/store/repos/keys.js';
import { generateApiKey, hashApiKey, displayPrefix } from '../src/auth/keys.js';
import { SIMULATOR_MODELS } from '../src/config-file/defaults.js';
import { videoCostMicros } from '../src/limits/pricing.js';

// Two `mediagate serve` processes on one fresh PostgreSQL database and one Redis (random key
// prefix), both relaying to one simulator in this process. Runs in the postgres project only
// (vitest.config.ts excludes it from the sqlite one): several processes on one SQLite file is not a
// supported deployment.

const POLL_MS = 1000; // tasks.poll_interval_ms: large next to tick_ms, so a poll cycle is visible
const TICK_MS = 100;
const LEASE_MS = 2000; // longer than a poll interval: an instance keeps its tasks until it dies
const VIDEO_S = 8; // a simulated task runs this long: long enough to kill an instance mid-task

describe('several gateway instances on one PostgreSQL and one Redis', () => {
  const dir = tempDir('mediagate-multi-');
  const redis = freshRedisPrefix();
  let db: Awaited<ReturnType<typeof freshDatabaseUrl>>;
  let sim: Simulator;
  let store: Store;
  let a: GatewayProcess;
  let b: GatewayProcess;
  const files = { a: join(dir.path, 'a.yaml'), b: join(dir.path, 'b.yaml') };

  const configText = (extraModels: string[] = []) =>
    // JSON is YAML: each instance reads its own copy of the same file.
    JSON.stringify({
      server: { host: '127.0.0.1', port: 0, shutdown_grace_s: 20 },
      database: { url: db.url },
      redis: redis.config,
      log: { level: 'warn' },
      tasks: { poll_interval_ms: POLL_MS, tick_ms: TICK_MS, lease_ms: LEASE_MS },
      channels: [{ name: 'simulator', type: 'simulator', base_url: sim.url, api_key: 'sim-upstream-key-1234', models: ['sim-chat', 'sim-video', ...extraModels] }],
      models: {
        'sim-chat': SIMULATOR_MODELS['sim-chat'],
        'sim-video': SIMULATOR_MODELS['sim-video'],
        ...Object.fromEntries(extraModels.map((m) => [m, { kind: 'chat', owned_by: 'simulator' }])),
      },
    });

  async function createKey(opts: { rpm?: number; concurrency?: number; creditMicros?: number } = {}): Promise<{ id: string; key: string }> {
    const key = generateApiKey();
    const row = await new KeysRepo(store.db).create({ name: 'multi', keyHash: hashApiKey(key), keyPrefix: displayPrefix(key), ...opts });
    return { id: row.id, key };
  }

  const chat = (base: string, key: string, model = 'sim-chat') =>
    fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));

  const modelIds = async (base: string, key: string) => {
    const r = await fetch(`${base}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
    return ((await r.json()) as { data: { id: string }[] }).data.map((m) => m.id);
  };

  beforeAll(async () => {
    db = await freshDatabaseUrl('postgres');
    sim = await startSimulator({ videoSeconds: VIDEO_S });
    writeFileSync(files.a, configText());
    writeFileSync(files.b, configText());
    // Both start at once on the empty database: migrations must not trip over each other.
    [a, b] = await Promise.all([spawnGateway(files.a), spawnGateway(files.b)]);
    store = await openStore(db.url, { migrate: false });
  }, 60_000);

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await store?.close();
    await sim?.close();
    await db?.drop();
    await redis.cleanup();
    dir.remove();
  }, 30_000);

  it('accepts exactly N of 3N requests of a key limited to N per minute, across both instances', async () => {
    const N = 4;
    const { key } = await createKey({ rpm: N });
    const answers = await Promise.all(Array.from({ length: 3 * N }, (_, i) => chat(i % 2 ? b.url : a.url, key)));
    const statuses = answers.map((x) => x.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(N);
    expect(statuses.filter((s) => s === 429)).toHaveLength(2 * N);
    expect(answers.find((x) => x.status === 429)!.body.error.code).toBe('rate_limit_exceeded');
  });

  it('two instances spending one key concurrently until both refuse: settled ≤ balance to the micro, unspent < one hold per instance', async () => {
    const start = 4000;
    const { id, key } = await createKey({ creditMicros: start });
    // sim-chat at $0.5 / $1.5 per million: the hold is the body's bytes × 0.5 + 20 × 1.5; the real
    // cost of "hi" (a few tokens each way) stays well inside it.
    const body = JSON.stringify({ model: 'sim-chat', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] });
    const estimate = Math.ceil(Buffer.byteLength(body) * 0.5 + 20 * 1.5);
    const worker = async (base: string) => {
      for (let refusals = 0; refusals < 3; ) {
        const r = await fetch(`${base}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body });
        const json = (await r.json()) as any;
        if (r.status === 200) refusals = 0;
        else {
          expect(json.error.code).toBe('insufficient_quota');
          refusals++;
        }
      }
    };
    await Promise.all([a.url, b.url, a.url, b.url, a.url, b.url].map(worker));
    // Write-backs (≤ 250 ms) and ledger batches (200 ms) land; then every micro-dollar is accounted for.
    const ledger = async () => {
      const rows = await store.db.selectFrom('usage').select(['status', 'cost_micros', 'overage_micros']).where('key_id', '=', id).execute();
      return rows.filter((r) => r.status === 200);
    };
    const spendable = async () => {
      const k = await store.db.selectFrom('api_keys').select('credit_micros').where('id', '=', id).executeTakeFirstOrThrow();
      const leases = await store.db.selectFrom('credit_leases').select('amount_micros').where('key_id', '=', id).execute();
      return Number(k.credit_micros) + leases.reduce((n, l) => n + Number(l.amount_micros), 0);
    };
    await eventually(async () => start - (await ledger()).reduce((n, r) => n + Number(r.cost_micros), 0) === (await spendable()), 10_000, 'write-backs');
    const rows = await ledger();
    const settled = rows.reduce((n, r) => n + Number(r.cost_micros), 0);
    expect(rows.length).toBeGreaterThan(10);
    expect(rows.every((r) => Number(r.overage_micros) === 0)).toBe(true);
    expect(settled).toBeLessThanOrEqual(start);
    expect(start - settled).toBeLessThan(2 * estimate);
  });

  it('holds a key to its concurrency limit across both instances', async () => {
    const { key } = await createKey({ concurrency: 2 });
    // The two admitted requests wait 2 s at the simulator, while the four others are refused.
    await simFault(sim.url, { match: 'openai.chat', kind: 'latency', ms: 2000, count: 2 });
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => chat(i % 2 ? b.url : a.url, key)));
    const statuses = answers.map((x) => x.status).sort();
    expect(statuses).toEqual([200, 200, 429, 429, 429, 429]);
    // Once they are done the slots are free again, on either instance (a release is sent as the response ends).
    await eventually(async () => (await chat(b.url, key)).status === 200, 5000, 'a free slot');
  });

  describe('the same Idempotency-Key sent to both at once', () => {
    const send = (base: string, path: string, key: string, idem: string, body: unknown) =>
      fetch(`${base}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': idem },
        body: JSON.stringify(body),
      }).then(async (r) => ({ status: r.status, replayed: r.headers.get('idempotent-replayed'), text: await r.text() }));
    const calls = async (name: string) => ((await (await fetch(`${sim.url}/__sim/stats`)).json()) as { counts: Record<string, number> }).counts[name] ?? 0;
    // The first request is slowed at the simulator, so the second arrives while it runs.
    const slow = (match: string) => simFault(sim.url, { kind: 'latency', ms: 800, match });

    it('a video create: one upstream call, one task, one hold, one create row, the same task id', async () => {
      const { id, key } = await createKey({ creditMicros: 50_000_000 });
      await slow('ark.video.create');
      const before = await calls('ark.video.create');
      const body = { model: 'sim-video', prompt: 'a corgi on a skateboard' };
      const [x, y] = await Promise.all([send(a.url, '/v1/video/generations', key, 'video-1', body), send(b.url, '/v1/video/generations', key, 'video-1', body)]);
      expect([x.status, y.status]).toEqual([200, 200]);
      expect([x.replayed, y.replayed].sort()).toEqual([null, 'true'].sort());
      expect(JSON.parse(x.text).data.task_id).toBe(JSON.parse(y.text).data.task_id);
      expect(await calls('ark.video.create')).toBe(before + 1);
      expect(await store.db.selectFrom('tasks').select('task_id').where('key_id', '=', id).execute()).toHaveLength(1);
      expect(await store.db.selectFrom('reservations').select('id').where('key_id', '=', id).execute()).toHaveLength(1);
      const rows = await eventually(async () => {
        const r = await store.db.selectFrom('usage').select('endpoint').where('key_id', '=', id).where('endpoint', '=', 'video').execute();
        return r.length ? r : undefined;
      }, 10_000, 'the create row');
      expect(rows).toHaveLength(1);
    });

    it('a chat completion: one upstream call, one ledger row, the same answer', async () => {
      const { id, key } = await createKey({ creditMicros: 1_000_000 });
      await slow('openai.chat');
      const before = await calls('openai.chat');
      const body = { model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }] };
      const [x, y] = await Promise.all([send(a.url, '/v1/chat/completions', key, 'chat-1', body), send(b.url, '/v1/chat/completions', key, 'chat-1', body)]);
      expect([x.status, y.status]).toEqual([200, 200]);
      expect([x.replayed, y.replayed].sort()).toEqual([null, 'true'].sort());
      expect(x.text).toBe(y.text);
      expect(await calls('openai.chat')).toBe(before + 1);
      // A marker row from each instance (a 404 for an unknown model, no Idempotency-Key): each
      // ledger writes its rows in order, so once both markers are in, so is any row a replay wrote.
      for (const base of [a.url, b.url]) expect((await chat(base, key, 'no-such-model')).status).toBe(404);
      const rows = await eventually(async () => {
        const r = await store.db.selectFrom('usage').select('status').where('key_id', '=', id).execute();
        return r.filter((x) => x.status === 404).length === 2 ? r : undefined;
      }, 10_000, 'the marker rows');
      expect(rows.filter((r) => r.status === 200)).toHaveLength(1);
      expect(rows).toHaveLength(3);
    });
  });

  it('a config reload by SIGHUP on one instance reaches the other through Redis, and `mediagate reload` reaches both', async () => {
    const { key } = await createKey();
    expect(await modelIds(a.url, key)).toEqual(['sim-chat', 'sim-video']);
    // Both files gain a model; only A is told to reload, B must follow A's message.
    writeFileSync(files.a, configText(['sim-chat-extra']));
    writeFileSync(files.b, configText(['sim-chat-extra']));
    a.proc.kill('SIGHUP');
    for (const gw of [a, b]) {
      await eventually(async () => (await modelIds(gw.url, key)).includes('sim-chat-extra'), 15_000, `the reloaded model on ${gw === a ? 'A' : 'B'}`);
    }
    expect(await modelIds(b.url, key)).toEqual(['sim-chat', 'sim-chat-extra', 'sim-video']);
    expect((await chat(b.url, key, 'sim-chat-extra')).status).toBe(200);
    expect(a.proc.exitCode).toBeNull();

    // `mediagate reload` (anywhere with the same config) makes every instance re-read its file.
    writeFileSync(files.a, configText());
    writeFileSync(files.b, configText());
    const res = await runCli(files.a, ['reload']);
    expect(res.status).toBe(0);
    expect(res.stdout).toContain('Reload sent to 2 running instance(s).');
    for (const gw of [a, b]) {
      await eventually(async () => !(await modelIds(gw.url, key)).includes('sim-chat-extra'), 15_000, 'the model removed by `mediagate reload`');
    }
  });

  it('`keys revoke` from the CLI tells both instances, which then refuse the key', async () => {
    const { id, key } = await createKey();
    expect((await chat(a.url, key)).status).toBe(200);
    expect((await chat(b.url, key)).status).toBe(200);
    const res = await runCli(files.a, ['keys', 'revoke', id]);
    expect(res.status).toBe(0);
    expect(res.stdout).toContain('Told 2 running instance(s) to drop their cached keys.');
    expect((await chat(a.url, key)).status).toBe(401);
    expect((await chat(b.url, key)).status).toBe(401);
  });

  it('shares tasks: read through either instance, polled once per cycle, finished by the survivor of a SIGKILL, settled once', async () => {
    const credit = 50_000_000;
    const { id: keyId, key } = await createKey({ creditMicros: credit });
    const created = new Map<string, number>();
    // Open tasks and the poller holding each (a finished task holds no lease).
    const leases = () =>
      store.db.selectFrom('tasks').select(['task_id', 'lease_owner']).where('key_id', '=', keyId).where('lease_owner', 'is not', null).where('status', 'not in', ['SUCCESS', 'FAILURE']).execute();

    // Create tasks alternately on A and B until both instances hold a lease on at least one
    // (which instance claims a task first is up to their ticks).
    let leasedBefore = new Map<string, string>();
    for (let round = 0; round < 3 && new Set(leasedBefore.values()).size < 2; round++) {
      const batch: string[] = [];
      for (let i = 0; i < 4; i++) {
        const via = i % 2 ? b : a;
        const other = via === a ? b : a;
        const res = await createTask(via.url, key, { model: 'sim-video', prompt: `task ${round}.${i}`, resolution: '480p', duration: 2 });
        expect(res.status).toBe(200);
        const taskId = res.body.data.task_id as string;
        created.set(taskId, Date.now());
        batch.push(taskId);
        // Created through one instance, read through the other.
        const read = await readTask(other.url, key, taskId);
        expect(read.status).toBe(200);
        expect(read.body.data.task_id).toBe(taskId);
      }
      await eventually(async () => {
        const leased = (await leases()).filter((r) => batch.includes(r.task_id));
        return leased.length === batch.length;
      }, 10_000, 'every new task claimed by a poller');
      leasedBefore = new Map((await leases()).map((r) => [r.task_id, r.lease_owner!]));
    }
    // Both hold open tasks; now, mid-task (the simulator needs VIDEO_S per task), A dies without
    // a chance to clean up.
    expect(new Set(leasedBefore.values()).size).toBe(2);
    a.proc.kill('SIGKILL');
    await a.exited;
    const killedAt = Date.now();
    // Only the survivor can write a lease running past killedAt + LEASE_MS: that names its poller.
    const survivorOwner = await eventually(async () => {
      const rows = await store.db
        .selectFrom('tasks')
        .select('lease_owner')
        .where('key_id', '=', keyId)
        .where('lease_until', '>', killedAt + LEASE_MS)
        .where('status', 'not in', ['SUCCESS', 'FAILURE'])
        .execute();
      return rows[0]?.lease_owner;
    }, 10_000, "the survivor's next claim");

    // B finishes every task, including those A held leases on.
    const finished = new Map<string, any>();
    for (const taskId of created.keys()) {
      const rec = await eventually(async () => {
        const r = await readTask(b.url, key, taskId);
        return r.status === 200 && (r.body.data.status === 'SUCCESS' || r.body.data.status === 'FAILURE') ? r.body.data : undefined;
      }, 25_000, `task ${taskId} to finish`);
      finished.set(taskId, rec);
    }
    const finishedAt = Date.now();
    for (const rec of finished.values()) expect(rec.status).toBe('SUCCESS');
    // Finished tasks hold no lease; those the dead instance held at the kill were finished by B.
    const lastClaims = await store.db.selectFrom('tasks').select('lease_owner').where('key_id', '=', keyId).execute();
    expect(lastClaims.every((r) => r.lease_owner === null)).toBe(true);
    expect([...leasedBefore.values()]).toContain(survivorOwner);
    const heldByDead = [...leasedBefore.entries()].filter(([, owner]) => owner !== survivorOwner);
    expect(heldByDead.length).toBeGreaterThan(0);

    // Once per cycle: never two polls of a task closer than half a poll interval, and no more
    // polls than cycles in its lifetime (+1 for the last).
    const stats = (await simVideoStats(sim.url)).tasks;
    for (const [taskId, createdAt] of created) {
      const s = stats[taskId];
      expect(s.polls).toBeGreaterThanOrEqual(1);
      expect(s.polls).toBeLessThanOrEqual(Math.floor((finishedAt - createdAt) / POLL_MS) + 1);
      if (s.polls > 1) expect(s.min_gap_ms).toBeGreaterThanOrEqual(POLL_MS / 2);
    }

    // Credit: every task settled exactly once, at its exact cost.
    let cost = 0;
    for (const rec of finished.values()) cost += videoCostMicros(SIMULATOR_MODELS['sim-video'], { unit: 'tokens', units: Number(rec.data.usage.total_tokens) });
    // A reader sees SUCCESS as soon as the poller moved the task; the poller closes the hold right
    // after, in its own transaction: wait for every hold to be closed, then check how.
    const reservations = await eventually(async () => {
      const rows = await store.db.selectFrom('reservations').select(['state', 'charged_micros']).where('key_id', '=', keyId).execute();
      return rows.length === created.size && rows.every((r) => r.state !== 'held') ? rows : undefined;
    }, 10_000, 'every credit hold closed');
    expect(reservations).toHaveLength(created.size);
    expect(reservations.every((r) => r.state === 'settled')).toBe(true);
    const balance = await store.db.selectFrom('api_keys').select('credit_micros').where('id', '=', keyId).executeTakeFirstOrThrow();
    expect(Number(balance.credit_micros)).toBe(credit - cost);
    expect(reservations.reduce((t, r) => t + Number(r.charged_micros), 0)).toBe(cost);
    const settles = await eventually(async () => {
      const rows = await store.db.selectFrom('usage').select(['cost_micros']).where('key_id', '=', keyId).where('endpoint', '=', 'video.settle').execute();
      return rows.length >= created.size ? rows : undefined;
    }, 10_000, 'the settle ledger rows');
    expect(settles).toHaveLength(created.size);
    expect(settles.reduce((t, r) => t + Number(r.cost_micros), 0)).toBe(cost);
  }, 60_000);

  it('drains on SIGTERM: a stream in flight ends complete, kept-alive connections close, exit status 0', async () => {
    const { key } = await createKey();
    await fetch(`${sim.url}/__sim/chat`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ stream_delay_ms: 150 }) });
    // fetch keeps its connection alive, as a proxy in front would.
    const res = await fetch(`${b.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sim-chat', stream: true, messages: [{ role: 'user', content: 'a few words' }] }),
    });
    expect(res.status).toBe(200);
    b.proc.kill('SIGTERM');
    const text = await res.text();
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    // Without closing the idle keep-alive connection the process would wait out shutdown_grace_s and exit 1.
    await b.exited;
    expect(b.proc.exitCode).toBe(0);
  });
});

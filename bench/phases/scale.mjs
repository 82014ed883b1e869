// Scale-out: mediagate instances sharing one PostgreSQL and one Redis, one alone and two behind a
// loopback TCP balancer (bench/servers/balancer.mjs), non-streamed chat with the credit-limited
// key (rpm, concurrency and credit limits in Redis and PostgreSQL, credit leases on). On a machine
// with fewer free cores than processes, two instances cannot show their req/s; the CPU time per
// request of all instances together shows what a second instance costs, and the database and
// Redis work per request (PostgreSQL transactions of the bench's own database, commands of a
// Redis server started for the phase) checks the counts of docs/scaling.md.
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { startServer, stopChild, cpuSeconds } from '../lib/children.mjs';
import { throughput } from '../lib/measure.mjs';
import { createKey, startMediagate } from '../lib/mediagate.mjs';

export const PG_ADMIN_URL = process.env.MEDIAGATE_BENCH_PG_URL ?? process.env.MEDIAGATE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

const freePort = () =>
  new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

async function startRedis() {
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  const { Redis } = await import('ioredis');
  const client = new Redis({ port, host: '127.0.0.1', lazyConnect: true, retryStrategy: (n) => (n > 50 ? null : 100) });
  await client.connect();
  return { url: `redis://127.0.0.1:${port}`, client, pid: child.pid, stop: () => (client.disconnect(), stopChild(child)) };
}

async function redisCommands(redis) {
  const info = await redis.client.info('stats');
  return Number(/total_commands_processed:(\d+)/.exec(info)[1]);
}

async function pgDatabase() {
  const { default: pg } = await import('pg');
  const name = `mediagate_bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    /** Committed transactions and rows written in the bench's database so far. */
    async stats() {
      const r = await admin.query('select xact_commit, tup_inserted, tup_updated from pg_stat_database where datname = $1', [name]);
      // The statistics collector reports with a delay: ask for a fresh snapshot.
      await admin.query('select pg_stat_clear_snapshot()');
      return { xacts: Number(r.rows[0].xact_commit), inserted: Number(r.rows[0].tup_inserted), updated: Number(r.rows[0].tup_updated) };
    },
    async drop() {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined);
      await admin.end();
    },
  };
}

export async function scalePhase(ctx) {
  const { root, tmp, configPath, P, bodies } = ctx;
  let db;
  try {
    db = await pgDatabase();
  } catch (err) {
    return { skipped: `PostgreSQL at ${PG_ADMIN_URL.replace(/:[^:@/]*@/, ':***@')} not reachable (${err.message})` };
  }
  const redis = await startRedis();
  const started = [];
  try {
    const cfg = JSON.parse(readFileSync(configPath, 'utf8'));
    cfg.database = { url: db.url };
    cfg.redis = { url: redis.url, key_prefix: 'bench:' };
    const scaleConfig = join(tmp, 'mediagate-scale.json');
    writeFileSync(scaleConfig, JSON.stringify(cfg, null, 2));
    const key = createKey(root, scaleConfig).key;
    const a = await startMediagate(root, scaleConfig);
    started.push(a);
    const b = await startMediagate(root, scaleConfig);
    started.push(b);
    const lb = await startServer('balancer', [join(root, 'bench/servers/balancer.mjs'), a.url, b.url]);
    started.push(lb);
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    // PostgreSQL transactions, rows written and Redis commands of each measured round.
    let before;
    const counters = {
      before: async () => {
        before = { pg: await db.stats(), redis: await redisCommands(redis) };
      },
      after: async () => {
        // Let the last batch of ledger rows and lease write-backs reach the database.
        await new Promise((r) => setTimeout(r, 600));
        const pg = await db.stats();
        return { pgXacts: pg.xacts - before.pg.xacts, pgRowsWritten: pg.inserted - before.pg.inserted + pg.updated - before.pg.updated, redisCommands: (await redisCommands(redis)) - before.redis };
      },
    };
    const chat = { path: '/v1/chat/completions', method: 'POST', headers, body: bodies.chat, ...counters };
    const load = await throughput(
      {
        one: { ...chat, url: a.url, pids: [a.pid] },
        two: { ...chat, url: lb.url, pids: [a.pid, b.pid] },
      },
      P.load,
    );
    const balancerCpuS = cpuSeconds(lb.pid);
    const per = (x) => {
      const n = Math.max(1, x.ok + x.non2xx);
      return { pgXactsPerReq: x.pgXacts / n, pgRowsPerReq: x.pgRowsWritten / n, redisCommandsPerReq: x.redisCommands / n };
    };
    return { database: 'postgres', load, perRequest: { one: per(load.one), two: per(load.two) }, balancerCpuS, instances: 2 };
  } finally {
    for (const s of started.reverse()) await s.stop();
    await redis.stop();
    await db.drop();
  }
}

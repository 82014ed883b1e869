#!/usr/bin/env node
// The admin usage views at scale: seeds N ledger rows (default 1,000,000, spread over a week,
// 1,000 keys, 8 models) into a fresh SQLite file — and, with --pg, a fresh PostgreSQL database —
// then times what /admin/api/usage and /admin/api/overview run: the first page, a page deep in the
// cursor chain, filtered pages, grouped totals and the overview aggregates. Each query runs 5 times;
// the median is printed. Usage: node bench/admin-usage.mjs [--rows=N] [--pg]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';
import { ensureBuilt } from '../bin/ensure-built.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const ROWS = Number(args.find((a) => a.startsWith('--rows='))?.slice(7) ?? 1_000_000);
const withPg = args.includes('--pg');
ensureBuilt(root, (m) => process.stderr.write(`bench: ${m}\n`));
const load = (p) => import(pathToFileURL(join(root, 'dist', p)).href);
const { openStore } = await load('store/db.js');
const { UsageReportsRepo } = await load('store/repos/usage-reports.js');
const { TaskReportsRepo } = await load('store/repos/task-reports.js');
const { UsageRepo } = await load('store/repos/usage.js');
const { UsageAdmin } = await load('admin/usage.js');
const { overview } = await load('admin/overview.js');

const MODELS = ['gpt-4o-mini', 'claude-sonnet', 'sim-chat', 'sim-image', 'doubao-seedance', 'gemini-flash', 'qwen', 'kling'];
const STATUSES = [200, 200, 200, 200, 200, 200, 200, 200, 429, 500];
const now = Date.now();
const WEEK = 7 * 86_400_000;

function* rows(n) {
  let seed = 42;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
  for (let i = 0; i < n; i++) {
    yield [`key_${String(Math.floor(rnd() * 1000)).padStart(4, '0')}`, MODELS[Math.floor(rnd() * MODELS.length)], 'ch', 'chat', STATUSES[Math.floor(rnd() * 10)], 100, 50, Math.floor(rnd() * 5000), Math.floor(rnd() * 3000), now - WEEK + Math.floor((i / n) * WEEK)];
  }
}

async function seedSqlite(file) {
  const store = await openStore(`sqlite:${file}`);
  await store.close();
  const { default: Sqlite } = await import('better-sqlite3');
  const db = new Sqlite(file);
  const insert = db.prepare('insert into usage (key_id, model, channel, endpoint, status, input_units, output_units, cost_micros, latency_ms, created_at) values (?,?,?,?,?,?,?,?,?,?)');
  db.transaction(() => {
    for (const r of rows(ROWS)) insert.run(...r);
  })();
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.exec('analyze');
  db.close();
  return `sqlite:${file}`;
}

async function seedPg() {
  const pg = (await import('pg')).default;
  const name = `mg_bench_admin_${process.pid}`;
  const admin = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = `postgres://postgres@127.0.0.1:5432/${name}`;
  const store = await openStore(url);
  await store.close();
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  await c.query(
    `insert into usage (key_id, model, channel, endpoint, status, input_units, output_units, cost_micros, latency_ms, created_at)
     select 'key_' || lpad((i % 1000)::text, 4, '0'), (array['${MODELS.join("','")}'])[1 + i % 8], 'ch', 'chat',
            case when i % 10 = 8 then 429 when i % 10 = 9 then 500 else 200 end, 100, 50, (i::bigint * 7919) % 5000, (i::bigint * 104729) % 3000,
            ${now - WEEK} + (i::bigint * ${WEEK}) / ${ROWS}
     from generate_series(0, ${ROWS - 1}) i`,
  );
  await c.query('analyze usage');
  await c.end();
  return {
    url,
    async drop() {
      const a = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
      await a.connect();
      await a.query(`drop database if exists ${name} with (force)`);
      await a.end();
    },
  };
}

async function time(fn) {
  const t = [];
  let out;
  for (let i = 0; i < 5; i++) {
    const s = performance.now();
    out = await fn();
    t.push(performance.now() - s);
  }
  t.sort((a, b) => a - b);
  return { ms: t[2], out };
}

async function measure(label, url) {
  const store = await openStore(url);
  const admin = new UsageAdmin(new UsageReportsRepo(store.db), new UsageRepo(store.db));
  const results = [];
  const run = async (name, fn) => {
    const { ms, out } = await time(fn);
    results.push({ name, ms });
    return out;
  };
  const first = await run('first page (100 rows, newest first)', () => admin.page({ limit: '100' }));
  let cursor = first.next_cursor;
  for (let i = 0; i < 50; i++) cursor = (await admin.page({ limit: '1000', cursor })).next_cursor;
  await run('page after 50,100 rows (cursor)', () => admin.page({ limit: '100', cursor }));
  await run('page of one key', () => admin.page({ key: 'key_0042', limit: '100' }));
  await run('page of one model, status 5xx', () => admin.page({ model: 'qwen', status: '5xx', limit: '100' }));
  await run('page of one key in a one-day window', () => admin.page({ key: 'key_0042', from: String(now - 2 * 86_400_000), to: String(now - 86_400_000), limit: '100' }));
  await run('totals by model, last hour', () => admin.grouped({ from: String(now - 3_600_000) }, 'model'));
  await run('totals by day, one key, whole week', () => admin.grouped({ key: 'key_0042' }, 'day'));
  await run('totals by key, last day (all keys)', () => admin.grouped({ from: String(now - 86_400_000) }, 'key'));
  await run('overview, last hour', () => overview(new UsageReportsRepo(store.db), new TaskReportsRepo(store.db), 'hour'));
  await run('overview, last day', () => overview(new UsageReportsRepo(store.db), new TaskReportsRepo(store.db), 'day'));
  await run('overview, last week (scans every row)', () => overview(new UsageReportsRepo(store.db), new TaskReportsRepo(store.db), 'week'));
  await store.close();
  console.log(`\n${label}, ${ROWS.toLocaleString('en')} ledger rows (median of 5)`);
  for (const r of results) console.log(`  ${r.name.padEnd(46)} ${r.ms.toFixed(1).padStart(9)} ms`);
}

const dir = mkdtempSync(join(tmpdir(), 'mediagate-bench-admin-'));
try {
  let s = performance.now();
  const sqliteUrl = await seedSqlite(join(dir, 'bench.db'));
  console.log(`seeded SQLite in ${((performance.now() - s) / 1000).toFixed(1)} s`);
  await measure('SQLite', sqliteUrl);
  if (withPg) {
    s = performance.now();
    const pgDb = await seedPg();
    console.log(`seeded PostgreSQL in ${((performance.now() - s) / 1000).toFixed(1)} s`);
    try {
      await measure('PostgreSQL', pgDb.url);
    } finally {
      await pgDb.drop();
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

#!/usr/bin/env node
// The poller's crash-recovery sweep (TasksRepo.finishedWithOpenHold) and the abandoned-hold sweep
// (ReservationsRepo.abandoned) on a large table: seeds `--rows` finished tasks, each with its own
// settled reservation, plus 1,000 open tasks with held reservations, 100 chat holds and 3 finished
// tasks whose hold a dead process left open; then prints the query plans and the time per call.
//
//   npx tsc -p tsconfig.build.json
//   node bench/sweep-holds.mjs --db sqlite:/tmp/sweep.db [--rows 1000000] [--calls 20] [--dist dist] [--abandoned]
//   node bench/sweep-holds.mjs --db postgres://postgres@127.0.0.1:5432/mg_sweep_bench
//
// The database is seeded once and reused: running the script with an older build's `--dist` and
// then with the current one on the same database compares the two side by side (a newer build's
// migrations then add its indexes). A PostgreSQL database named in --db is created when missing.
import { performance } from 'node:perf_hooks';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { sql } from 'kysely';
import pg from 'pg';

const args = Object.fromEntries(
  process.argv
    .slice(2)
    .join(' ')
    .split(/\s*--/)
    .filter(Boolean)
    .map((a) => a.split(/\s+/)),
);
const url = args.db ?? 'sqlite:.bench-tmp/sweep.db';
const rows = Number(args.rows ?? 1_000_000);
const calls = Number(args.calls ?? 20);
const dist = resolve(args.dist ?? 'dist');

const { openStore } = await import(pathToFileURL(`${dist}/store/db.js`).href);
const { TasksRepo } = await import(pathToFileURL(`${dist}/store/repos/tasks.js`).href);
const { ReservationsRepo } = await import(pathToFileURL(`${dist}/store/repos/reservations.js`).href);

if (url.startsWith('postgres')) {
  const u = new URL(url);
  const name = u.pathname.slice(1);
  u.pathname = '/postgres';
  const admin = new pg.Client({ connectionString: u.toString() });
  await admin.connect();
  const found = await admin.query('select 1 from pg_database where datname = $1', [name]);
  if (!found.rowCount) await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
}

const store = await openStore(url, { backgroundCheckpoints: false, timeouts: { statement_timeout_ms: 600_000, query_timeout_ms: 600_000 } });
const { db, dialect } = store;
const pgDb = dialect === 'postgres';
const say = (m) => process.stdout.write(`${m}\n`);

const NOW = Date.now();
// About the size of a real provider task object (Ark's, with its video URL).
const DATA = JSON.stringify({ id: 'x', model: 'doubao-seedance-1-0-lite-i2v-250428', status: 'succeeded', content: { video_url: `https://example.invalid/${'v'.repeat(400)}` }, usage: { completion_tokens: 108900, total_tokens: 108900 } });

async function seed() {
  const have = Number((await sql`select count(*) as n from tasks where task_id like 'swp-%'`.execute(db)).rows[0].n);
  if (have >= rows + 1003) return false;
  await sql`delete from tasks where task_id like 'swp-%'`.execute(db);
  await sql`delete from reservations where id like 'swp-%'`.execute(db);
  const t0 = performance.now();
  // One statement per table and chunk, rows generated inside the database.
  const series = (from, to) =>
    pgDb
      ? sql`select i from generate_series(${sql.lit(from)}::bigint, ${sql.lit(to - 1)}::bigint) as g(i)`
      : sql`with recursive n(i) as (select ${sql.lit(from)} union all select i + 1 from n where i + 1 < ${sql.lit(to)}) select i from n`;
  const L = (v) => (v === null ? sql.raw('null') : sql.lit(v));
  const cat = (a, b) => sql`${a} || ${b}`;
  const addRange = async (from, to, status, state) => {
    await sql`insert into reservations (id, key_id, amount_micros, state, charged_micros, created_at, closed_at)
      select ${cat(sql.lit('swp-r-'), sql`i`)}, ${cat(sql.lit('swp-k-'), sql`(i % 100)`)}, 1000, ${L(state)}, ${L(state === 'held' ? 0 : 1000)}, ${L(NOW - 7_200_000)}, ${L(state === 'held' ? null : NOW)}
      from (${series(from, to)}) s`.execute(db);
    await sql`insert into tasks (task_id, upstream_id, key_id, model, channel, upstream_model, action, status, fail_reason, submit_time, start_time, finish_time, progress, data, reservation_id, estimated_units, billing, next_poll_at, lease_owner, lease_until, poll_failures, deadline_at, url_expires_at, callback_token, updated_at)
      select ${cat(sql.lit('swp-t-'), sql`i`)}, ${cat(sql.lit('swp-t-'), sql`i`)}, ${cat(sql.lit('swp-k-'), sql`(i % 100)`)}, 'sim-video', 'sim', 'sim-video', 'generate', ${status === 'SUCCESS' ? sql`case when i % 10 = 0 then 'FAILURE' else 'SUCCESS' end` : L(status)}, '', ${L(NOW - 7_200_000)}, ${L(NOW - 7_100_000)}, ${L(status === 'IN_PROGRESS' ? 0 : NOW)}, ${L(status === 'IN_PROGRESS' ? '50%' : '100%')}, ${L(DATA)}, ${cat(sql.lit('swp-r-'), sql`i`)}, 108900, '', ${L(NOW + 3_600_000)}, null, 0, 0, ${L(NOW + 86_400_000)}, 0, null, ${L(NOW)}
      from (${series(from, to)}) s`.execute(db);
  };
  if (!pgDb) await sql.raw('begin').execute(db);
  for (let i = 0; i < rows; i += 100_000) await addRange(i, Math.min(rows, i + 100_000), 'SUCCESS', 'settled');
  await addRange(rows, rows + 1000, 'IN_PROGRESS', 'held'); // open tasks: their holds are held
  await addRange(rows + 1000, rows + 1003, 'SUCCESS', 'held'); // finished, hold left open by a dead process
  // Chat holds (no task), some older than abandoned_hold_s.
  await sql`insert into reservations (id, key_id, amount_micros, state, charged_micros, created_at, closed_at)
    select ${cat(sql.lit('swp-c-'), sql`i`)}, 'swp-k-0', 1000, 'held', 0, ${L(NOW - 7_200_000)}, null from (${series(0, 100)}) s`.execute(db);
  if (!pgDb) await sql.raw('commit').execute(db);
  if (pgDb) await sql`analyze`.execute(db);
  say(`seeded ${rows + 1003} tasks in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  return true;
}

async function plan(text) {
  if (pgDb) {
    const r = await sql`explain (analyze, buffers off, timing off) ${sql.raw(text)}`.execute(db).catch(() => null);
    if (r) return r.rows.map((x) => x['QUERY PLAN']);
  }
  return (await sql.raw(`explain query plan ${text}`).execute(db)).rows.map((x) => x.detail);
}

/** The statement a repo call sends, with its parameters inlined (they are plain strings and numbers). */
function inline(compiled) {
  let i = 0;
  const lit = (v) => (typeof v === 'number' ? String(v) : `'${String(v).replace(/'/g, "''")}'`);
  return compiled.sql.replace(pgDb ? /\$(\d+)/g : /\?/g, (m, n) => lit(compiled.parameters[pgDb ? Number(n) - 1 : i++]));
}

function captureNext(run) {
  // The first statement the call sends, taken at the executor (the store is built without a log hook).
  let seen = null;
  const orig = db.getExecutor().executeQuery.bind(db.getExecutor());
  db.getExecutor().executeQuery = async (q, id) => {
    seen ??= q;
    return orig(q, id);
  };
  return run().finally(() => {
    db.getExecutor().executeQuery = orig;
  }).then((r) => ({ r, compiled: seen }));
}

async function time(name, run) {
  const first = await captureNext(run);
  say(`\n${name}: ${Array.isArray(first.r) ? first.r.length : first.r} rows`);
  for (const line of await plan(inline(first.compiled))) say(`  ${line}`);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < calls; i++) await run();
  const wall = (performance.now() - t0) / calls;
  const c = process.cpuUsage(cpu0);
  const cpu = (c.user + c.system) / 1000 / calls;
  say(`  ${wall.toFixed(2)} ms per call (wall), ${cpu.toFixed(2)} CPU ms per call in this process, ${calls} calls`);
}

try {
  await seed();
  const tasks = new TasksRepo(db, dialect, store.readRaw);
  const reservations = new ReservationsRepo(db);
  const indexes = pgDb
    ? (await sql`select indexname as name from pg_indexes where tablename in ('tasks', 'reservations') order by 1`.execute(db)).rows
    : (await sql`select name from sqlite_master where type = 'index' and tbl_name in ('tasks', 'reservations') order by 1`.execute(db)).rows;
  say(`${dialect}, ${dist}; indexes: ${indexes.map((r) => r.name).join(', ')}`);
  const [load] = (await import('node:os')).loadavg();
  say(`load average ${load.toFixed(2)}`);
  await time('finishedWithOpenHold(100)', () => tasks.finishedWithOpenHold(100));
  // Without an index on tasks.reservation_id each candidate hold is a scan of the tasks table: pass
  // --abandoned to time it too (minutes per call on a large table before 0009b).
  if ('abandoned' in args) await time('abandoned(cutoff 1 h ago, 100)', () => reservations.abandoned(NOW - 3_600_000, 100));
} finally {
  await store.close();
}

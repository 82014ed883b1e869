import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CompiledQuery, Kysely, PostgresDialect, SqliteDialect, sql, type LogEvent } from 'kysely';
import BetterSqlite from 'better-sqlite3';
import pg from 'pg';
import { freshDatabaseUrl } from './helpers/databases.js';
import { startGateway, type TestGateway } from './helpers/gateway.js';
import { createTask } from './helpers/video.js';
import { openStore, type Store } from '../src/store/db.js';
import type { Database } from '../src/store/schema.js';
import { TasksRepo } from '../src/store/repos/tasks.js';
import { ReservationsRepo } from '../src/store/repos/reservations.js';

// The poller's crash-recovery sweep (finished tasks whose credit hold a dead process left open)
// runs every 30 s; the abandoned-hold sweep every minute. Both must cost in proportion to the held
// reservations, not to the finished tasks: their plans start from the held reservations
// (reservations_held) and look tasks up by reservation (tasks_reservation), on both stores. The
// abandoned-hold sweep leaves the holds of image waits alone, found by image_waits_reservation.

const FINISHED = 20_000;
const OPEN = 40;
const WAITS = 2_000;

describe('hold sweeps: query plans on a table of finished tasks', () => {
  let db: Awaited<ReturnType<typeof freshDatabaseUrl>>;
  let store: Store;
  let logged: Kysely<Database>;
  let seen: CompiledQuery[];

  beforeAll(async () => {
    db = await freshDatabaseUrl();
    store = await openStore(db.url);
    const pgDb = store.dialect === 'postgres';
    const series = (n: number) =>
      pgDb ? sql`select i from generate_series(0, ${sql.lit(n - 1)}) as g(i)` : sql`with recursive n(i) as (select 0 union all select i + 1 from n where i + 1 < ${sql.lit(n)}) select i from n`;
    // Rows generated inside the database: FINISHED settled tasks, OPEN open tasks with held holds,
    // 2 finished tasks whose hold is still held, 5 chat holds (no task) from two hours ago.
    const add = async (prefix: string, n: number, status: string, state: string) => {
      await sql`insert into reservations (id, key_id, amount_micros, state, charged_micros, created_at, closed_at)
        select ${sql.lit(prefix)} || i, 'k', 1000, ${sql.lit(state)}, 0, 1000, null from (${series(n)}) s`.execute(store.db);
      await sql`insert into tasks (task_id, upstream_id, key_id, model, channel, upstream_model, action, status, fail_reason, submit_time, start_time, finish_time, progress, data, reservation_id, estimated_units, billing, next_poll_at, lease_owner, lease_until, poll_failures, deadline_at, url_expires_at, callback_token, updated_at)
        select ${sql.lit(prefix)} || i, ${sql.lit(prefix)} || i, 'k', 'm', 'c', 'm', 'generate', ${sql.lit(status)}, '', 1, 1, 1, '100%', '{}', ${sql.lit(prefix)} || i, 1, '', 1, null, 0, 0, 1, 0, null, 1
        from (${series(n)}) s`.execute(store.db);
    };
    await add('done-', FINISHED, 'SUCCESS', 'settled');
    await add('open-', OPEN, 'IN_PROGRESS', 'held');
    await add('lost-', 2, 'FAILURE', 'held');
    await sql`insert into reservations (id, key_id, amount_micros, state, charged_micros, created_at, closed_at)
      select 'chat-' || i, 'k', 1000, 'held', 0, 1, null from (${series(5)}) s`.execute(store.db);
    // Image requests whose client stopped waiting: 3 holds as old as the chat ones, but belonging
    // to a wait; WAITS rows in all, so the table has statistics worth planning from.
    await sql`insert into reservations (id, key_id, amount_micros, state, charged_micros, created_at, closed_at)
      select 'wait-' || i, 'k', 1000, 'held', 0, 1, null from (${series(3)}) s`.execute(store.db);
    await sql`insert into image_waits (id, key_id, model, channel, endpoint, status, error, input_units, started_at, reservation_id, units, tasks, state, next_attempt_at, lease_owner, lease_until, expires_at, created_at)
      select 'w-' || i, 'k', 'm', 'c', 'images.generations', 504, '', 0, 1, case when i < 3 then 'wait-' else 'done-' end || i, '{}', '{}', 'pending', 1, null, 0, 1, 1 from (${series(WAITS)}) s`.execute(store.db);
    // PostgreSQL plans from statistics (autovacuum gathers them in production); SQLite has none
    // unless someone runs ANALYZE, and its plan must hold without them.
    if (pgDb) await sql`analyze`.execute(store.db);

    // A second connection that records the statements the repos send, to explain exactly those.
    const log = (e: LogEvent) => {
      if (e.level === 'query') seen.push(e.query);
    };
    const target = db.url.replace(/^sqlite:/, '');
    logged = new Kysely<Database>({
      dialect: pgDb ? new PostgresDialect({ pool: new pg.Pool({ connectionString: db.url, max: 1 }) }) : new SqliteDialect({ database: new BetterSqlite(target) }),
      log,
    });
  });
  afterAll(async () => {
    await logged?.destroy();
    await store?.close();
    await db?.drop();
  });
  beforeEach(() => {
    seen = [];
  });

  async function planOf(query: CompiledQuery): Promise<string> {
    const prefix = store.dialect === 'postgres' ? 'explain ' : 'explain query plan ';
    const r = await store.db.executeQuery<Record<string, string>>(CompiledQuery.raw(prefix + query.sql, [...query.parameters]));
    return r.rows.map((row) => row['QUERY PLAN'] ?? row.detail).join('\n');
  }

  it('finds the finished tasks with a held hold from the held reservations, not by scanning finished tasks', async () => {
    const rows = await new TasksRepo(logged, store.dialect).finishedWithOpenHold(100);
    expect(rows.map((r) => r.task_id).sort()).toEqual(['lost-0', 'lost-1']);
    expect(seen).toHaveLength(1);
    const plan = await planOf(seen[0]);
    expect(plan).toContain('reservations_held');
    expect(plan).toContain('tasks_reservation');
    expect(plan).not.toContain('tasks_open_due');
    if (store.dialect === 'postgres') expect(plan).not.toMatch(/Seq Scan on tasks/);
    else {
      // The held reservations are the outer loop: the first line of SQLite's plan.
      expect(plan.split('\n')[0]).toMatch(/^SCAN reservations USING COVERING INDEX reservations_held/);
      expect(plan).not.toMatch(/^SCAN tasks/m);
    }
  });

  it('finds abandoned chat holds through the same indexes (no scan of the tasks per hold)', async () => {
    const ids = await new ReservationsRepo(logged).abandoned(500, 100);
    expect(ids.sort()).toEqual(['chat-0', 'chat-1', 'chat-2', 'chat-3', 'chat-4']);
    expect(seen).toHaveLength(1);
    const plan = await planOf(seen[0]);
    expect(plan).toContain('reservations_held');
    expect(plan).toContain('tasks_reservation');
    expect(plan).toContain('image_waits_reservation');
    if (store.dialect === 'postgres') expect(plan).not.toMatch(/Seq Scan/);
    else expect(plan).not.toMatch(/SCAN (tasks|reservations)$/m);
  });
});

describe('hold sweep: a finished task whose hold a dead process left open', () => {
  const START = 500_000_000;
  let gw: TestGateway;
  afterEach(async () => gw?.close());

  it('is settled (or released) exactly once; open tasks and closed holds are left alone', async () => {
    gw = await startGateway({}, { noPoller: true });
    const { id: keyId, key } = await gw.createKey({ creditMicros: START });
    const ids: string[] = [];
    for (const prompt of ['lost success', 'lost failure', 'still open']) {
      const res = await createTask(gw.url, key, { model: 'sim-video', prompt });
      expect(res.status).toBe(200);
      ids.push(res.body.data.task_id);
    }
    const { repo, poller } = gw.services.tasks;
    const [ok, failed, open] = await Promise.all(ids.map(async (id) => (await repo.get(id))!));
    const reservations = gw.services.store.db.selectFrom('reservations').selectAll();
    const holdOf = async (reservationId: string | null) => (await reservations.where('id', '=', reservationId!).executeTakeFirstOrThrow());
    const held = (await holdOf(ok.reservation_id)).amount_micros;
    expect(held).toBeGreaterThan(0);

    // What a process that died between a task's move and its settle leaves behind.
    const now = Date.now();
    expect(await repo.move(ok.task_id, ok.status, { status: 'SUCCESS', progress: '100%', finish_time: Math.floor(now / 1000), updated_at: now })).toBe(true);
    expect(await repo.move(failed.task_id, failed.status, { status: 'FAILURE', progress: '100%', fail_reason: 'timeout: gave up', finish_time: Math.floor(now / 1000), updated_at: now })).toBe(true);
    expect((await repo.finishedWithOpenHold(100)).map((r) => r.task_id).sort()).toEqual([ok.task_id, failed.task_id].sort());

    await poller.sweepOpenHolds();
    await poller.sweepOpenHolds();

    expect((await holdOf(ok.reservation_id)).state).toBe('settled');
    expect((await holdOf(failed.reservation_id)).state).toBe('released');
    expect((await holdOf(open.reservation_id)).state).toBe('held');
    expect(await repo.finishedWithOpenHold(100)).toEqual([]);
    await gw.services.ledger.flush();
    const settles = await gw.services.store.db.selectFrom('usage').selectAll().where('key_id', '=', keyId).where('endpoint', '=', 'video.settle').execute();
    // One ledger row per closed hold, none for the open task: the second sweep closed nothing again.
    expect(settles.map((r) => r.status).sort()).toEqual([200, 504]);
    const charged = (await holdOf(ok.reservation_id)).charged_micros;
    expect(charged).toBeGreaterThan(0);
    const balance = await new ReservationsRepo(gw.services.store.db).balance(keyId);
    // Charged once for the success, the failure's hold returned, the open task's hold still out.
    expect(balance).toBe(START - charged - (await holdOf(open.reservation_id)).amount_micros);
  });
});

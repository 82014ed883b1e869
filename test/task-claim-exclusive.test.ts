import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabaseUrl, testDialect } from './helpers/databases.js';
import { openStore, type Store } from '../src/store/db.js';
import { TasksRepo, type NewTaskRow } from '../src/store/repos/tasks.js';

// Pollers of several instances claim due tasks from one database at the same moments. Each has its
// own connection pool, as separate processes would. A task may be claimed by one of them per cycle,
// never by two (PostgreSQL: SELECT … FOR UPDATE SKIP LOCKED, then UPDATE, in one transaction).

const INSTANCES = 4;
const TASKS = 60;
const LEASE_MS = 3_600_000;
const POLL_MS = 3_600_000;

function task(i: number, now: number): NewTaskRow {
  return {
    task_id: `cgt-20250101000000-claim${String(i).padStart(3, '0')}`,
    upstream_id: `cgt-20250101000000-claim${String(i).padStart(3, '0')}`,
    billing: '',
    key_id: 'key_claims',
    model: 'sim-video',
    channel: 'simulator',
    upstream_model: 'sim-video',
    action: 'textGenerate',
    status: i % 3 === 0 ? 'SUBMITTED' : i % 3 === 1 ? 'QUEUED' : 'IN_PROGRESS',
    fail_reason: '',
    submit_time: Math.floor(now / 1000),
    start_time: 0,
    finish_time: 0,
    progress: '0%',
    data: '{}',
    reservation_id: null,
    estimated_units: 0,
    next_poll_at: now - 1000,
    lease_owner: null,
    lease_until: 0,
    poll_failures: 0,
    deadline_at: now + 3_600_000,
    url_expires_at: 0,
    callback_token: null,
    updated_at: now,
  };
}

describe(`task claims by several instances (${testDialect()})`, () => {
  let db: Awaited<ReturnType<typeof freshDatabaseUrl>>;
  const stores: Store[] = [];

  beforeAll(async () => {
    db = await freshDatabaseUrl();
    stores.push(await openStore(db.url));
    for (let i = 1; i < INSTANCES; i++) stores.push(await openStore(db.url, { migrate: false }));
  });
  afterAll(async () => {
    for (const s of stores) await s.close();
    await db?.drop();
  });

  it('gives every due task to exactly one instance when all claim at once', async () => {
    const now = Date.now();
    const repos = stores.map((s) => new TasksRepo(s.db, s.dialect));
    for (let i = 0; i < TASKS; i++) await repos[0].insert(task(i, now));

    // Every instance claims in small batches, all at the same time, until nothing is due.
    const claimedBy = new Map<string, string[]>();
    await Promise.all(
      repos.map(async (repo, n) => {
        const owner = `instance-${n}`;
        for (;;) {
          const rows = await repo.claimDue(owner, now, now + LEASE_MS, now + POLL_MS, 3);
          if (!rows.length) return;
          for (const r of rows) {
            expect(r.lease_owner).toBe(owner);
            claimedBy.set(r.task_id, [...(claimedBy.get(r.task_id) ?? []), owner]);
          }
        }
      }),
    );
    expect(claimedBy.size).toBe(TASKS);
    const twice = [...claimedBy.entries()].filter(([, owners]) => owners.length > 1);
    expect(twice).toEqual([]);

    // The database agrees: each task leased once, to the instance that got it, not due until the next cycle.
    const rows = await stores[0].db.selectFrom('tasks').select(['task_id', 'lease_owner', 'lease_until', 'next_poll_at']).execute();
    for (const r of rows) {
      expect(r.lease_owner).toBe(claimedBy.get(r.task_id)![0]);
      expect(Number(r.lease_until)).toBe(now + LEASE_MS);
      expect(Number(r.next_poll_at)).toBe(now + POLL_MS);
    }
  });

  it('lets an instance keep its own leased tasks and another take them only after the lease ran out', async () => {
    const [mine, other] = stores.map((s) => new TasksRepo(s.db, s.dialect));
    const t0 = Date.now() + 10 * 60_000; // before the first test's tasks are due again
    const row = { ...task(999, t0), next_poll_at: t0 };
    await mine.insert(row);
    expect((await mine.claimDue('A', t0, t0 + 5000, t0 + 1000, 10)).map((r) => r.task_id)).toEqual([row.task_id]);
    // Due again one poll interval later: still A's lease, so only A may claim it.
    expect(await other.claimDue('B', t0 + 1000, t0 + 6000, t0 + 2000, 10)).toEqual([]);
    expect((await mine.claimDue('A', t0 + 1000, t0 + 6000, t0 + 2000, 10)).map((r) => r.task_id)).toEqual([row.task_id]);
    // A stops claiming (it died): once its lease has run out, B takes the task.
    expect((await other.claimDue('B', t0 + 6000, t0 + 11_000, t0 + 7000, 10)).map((r) => r.lease_owner)).toEqual(['B']);
  });
});

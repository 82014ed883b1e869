import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { freshDatabaseUrl, testDialect } from './helpers/databases.js';
import { eventually } from './helpers/eventually.js';
import { openStore, type Store } from '../src/store/db.js';
import { BACKGROUND_NICE } from '../src/store/checkpointer.js';
import { KeysRepo } from '../src/store/repos/keys.js';
import { UsageRepo } from '../src/store/repos/usage.js';

// The SQLite background worker (usage ledger batches, WAL checkpoints) runs below the priority of
// the threads that serve requests: its thread alone is niced, the rest of the process is not, and
// its batches still commit. Read from the kernel's own view of each thread (/proc, Linux).

/** nice of every thread of this process, by thread id (field 19 of /proc/<pid>/task/<tid>/stat). */
function threadNice(): Map<number, number> {
  const out = new Map<number, number>();
  for (const tid of readdirSync('/proc/self/task')) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    } catch {
      continue; // the thread ended between the listing and the read
    }
    // The fields after the command name (in parentheses, which may hold spaces) start at field 3.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    out.set(Number(tid), Number(fields[19 - 3]));
  }
  return out;
}

const onLinux = existsSync('/proc/thread-self');
// Niceness tops out at 19: a process already that nice has no lower priority to give its worker.
const alreadyNicest = onLinux && threadNice().get(process.pid) === 19;

describe.skipIf(testDialect() !== 'sqlite' || !onLinux || alreadyNicest)('the SQLite background worker\'s CPU priority', () => {
  let db: Awaited<ReturnType<typeof freshDatabaseUrl>>;
  let store: Store | null = null;

  beforeEach(async () => {
    db = await freshDatabaseUrl();
  });
  afterEach(async () => {
    await store?.close();
    await db.drop();
  });

  it('the worker\'s thread, and only it, runs at the background niceness; its batches still commit', async () => {
    expect(BACKGROUND_NICE).toBeGreaterThan(0);
    const before = threadNice();
    const processNice = before.get(process.pid)!;
    expect(processNice).toBeTypeOf('number');
    const expected = Math.min(19, processNice + BACKGROUND_NICE);
    expect([...before.values()].filter((n) => n === expected)).toHaveLength(0);

    store = await openStore(db.url);
    const niced = await eventually(() => {
      const found = [...threadNice()].filter(([tid, n]) => !before.has(tid) && n === expected);
      return found.length ? found : null;
    }, 15_000, 'a new thread at the background niceness');
    expect(niced).toHaveLength(1);
    // The main thread (and every thread that was there before) keeps its priority.
    const now = threadNice();
    for (const [tid, n] of before) if (now.has(tid)) expect(n).toBe(now.get(tid));
    expect(now.get(process.pid)).toBe(processNice);

    // Batches still commit.
    const key = await new KeysRepo(store.db).create({ name: 't', keyHash: 'h-nice', keyPrefix: 'mg-n', creditMicros: null });
    const usage = new UsageRepo(store.db, store.withoutLockWait, store.writeBatch);
    await usage.insertMany([{ key_id: key.id, model: 'm', channel: 'c', endpoint: 'chat', status: 200, input_units: 1, output_units: 2, cost_micros: 3, overage_micros: 0, latency_ms: 1, created_at: 1 }]);
    const rows = await store.db.selectFrom('usage').select(['key_id', 'cost_micros']).execute();
    expect(rows).toEqual([{ key_id: key.id, cost_micros: 3 }]);

    await store.close();
    store = null;
    await eventually(() => !threadNice().has(niced[0][0]), 15_000, 'the worker thread to end with the store');
  });
});

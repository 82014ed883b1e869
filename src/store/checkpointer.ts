import { Worker } from 'node:worker_threads';
import { createRequire } from 'node:module';

// The SQLite background worker: one thread with its own connection to the database file, for the
// work that must not run on the event loop (better-sqlite3 runs every statement synchronously).
//
// - WAL checkpoints. SQLite in WAL mode fsyncs only when it checkpoints, and by default the writing
//   connection checkpoints itself, on the event loop, stalling every request for the length of an
//   fsync. Here the worker checkpoints instead (PASSIVE: it never blocks the writer), and the
//   gateway's connection turns its automatic checkpoints off.
// - Background batches (the usage ledger's rows): a batch of statements runs here as one
//   transaction. Writing a few hundred rows costs a millisecond or two, which on the event loop is
//   a millisecond or two of latency added to every request in flight; here the event loop only
//   posts the statements. The worker may wait for a write lock (busy_timeout): only it waits.
//
// One thread for both, so the gateway carries one extra isolate, not two.
//
// The thread runs at a lower CPU priority: BACKGROUND_NICE above the process's niceness, this
// thread only (Linux, where a thread has an id of its own that setpriority() takes). Its work is
// never waited for by a request, but a batch takes a millisecond or more of CPU several times a
// second, and on a machine with few cores that time was taken from the processes a request passes
// through: niced, chat requests one at a time added 0.05–0.17 ms less at p99 (six runs side by
// side, 0.63–0.96 ms against 0.70–1.08). Ten steps nicer, the thread still gets about a tenth of a
// core it shares with one busy process: more than twice what the ledger needs at full load (about
// 4% of a core at 12,000 rows/s).
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
if (workerData.nice > 0) {
  try {
    const tid = Number(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop());
    const os = require('node:os');
    if (tid > 0) os.setPriority(tid, Math.min(19, os.getPriority(tid) + workerData.nice));
  } catch {
    // No per-thread id (not Linux), or the kernel refused the change: the thread keeps the process's priority.
  }
}
const Database = require(workerData.driver);
const db = new Database(workerData.path);
db.pragma('busy_timeout = ' + workerData.busyMs);
// Its commits must not checkpoint inline either: the timer below does, PASSIVE.
if (workerData.checkpointMs > 0) db.pragma('wal_autocheckpoint = 0');
const statements = new Map();
function prepared(text) {
  let s = statements.get(text);
  if (!s) {
    if (statements.size >= 64) statements.clear();
    s = db.prepare(text);
    statements.set(text, s);
  }
  return s;
}
const runBatch = db.transaction((batch) => {
  for (let i = 0; i < batch.length; i += 2) prepared(batch[i]).run(batch[i + 1]);
});
const timer = workerData.checkpointMs > 0 ? setInterval(() => {
  try { db.pragma('wal_checkpoint(PASSIVE)'); } catch (err) { parentPort.postMessage({ checkpointError: String(err && err.message) }); }
}, workerData.checkpointMs) : null;
parentPort.on('message', (m) => {
  if (m === 'stop') {
    if (timer) clearInterval(timer);
    if (workerData.checkpointMs > 0) { try { db.pragma('wal_checkpoint(PASSIVE)'); } catch {} }
    db.close();
    process.exit(0);
  }
  try {
    runBatch.immediate(m.batch);
    parentPort.postMessage({ id: m.id });
  } catch (err) {
    parentPort.postMessage({ id: m.id, error: { message: String(err && err.message), code: err && typeof err.code === 'string' ? err.code : undefined } });
  }
});
`;

/** How much nicer than the process the background worker runs (niceness tops out at 19). */
export const BACKGROUND_NICE = 10;

/** One statement of a batch: SQL text and its parameters (numbers, strings, null). */
export interface BatchStatement {
  sql: string;
  parameters: readonly unknown[];
}

export interface SqliteWorker {
  /**
   * Runs the statements as one transaction on the worker's connection; resolves when it committed.
   * Rejects with the statement's error (its `code` kept, e.g. SQLITE_BUSY or
   * SQLITE_CONSTRAINT_NOTNULL) and nothing of the batch written; or, when the worker is gone, with
   * an error of code `SQLITE_BUSY` (to be retried on the gateway's own connection).
   */
  run(batch: readonly BatchStatement[]): Promise<void>;
  /** false once the worker stopped or died: batches then belong on the gateway's own connection. */
  readonly alive: boolean;
  stop(): Promise<void>;
}

export interface SqliteWorkerOptions {
  /** PASSIVE checkpoint period; 0: no checkpoints (the gateway's connection keeps its own). */
  checkpointMs: number;
  /** How long a batch waits for a write lock another connection holds. */
  busyMs: number;
  onError: (message: string) => void;
}

export function startSqliteWorker(path: string, opts: SqliteWorkerOptions): SqliteWorker {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { path, driver, checkpointMs: opts.checkpointMs, busyMs: opts.busyMs, nice: BACKGROUND_NICE } });
  const waiting = new Map<number, { resolve(): void; reject(err: unknown): void }>();
  let nextId = 1;
  let alive = true;
  let exited = false;
  const gone = (why: string) => {
    alive = false;
    for (const w of waiting.values()) w.reject(Object.assign(new Error(`SQLite background worker stopped: ${why}`), { code: 'SQLITE_BUSY' }));
    waiting.clear();
  };
  worker.on('message', (m: { id?: number; error?: { message: string; code?: string }; checkpointError?: string }) => {
    if (m.checkpointError !== undefined) return opts.onError(`WAL checkpoint failed: ${m.checkpointError}`);
    const w = waiting.get(m.id!);
    if (!w) return;
    waiting.delete(m.id!);
    if (waiting.size === 0) worker.unref();
    if (m.error) w.reject(Object.assign(new Error(m.error.message), { code: m.error.code }));
    else w.resolve();
  });
  worker.on('error', (err) => {
    opts.onError(`SQLite background worker stopped: ${err.message}`);
    gone(err.message);
  });
  worker.on('exit', () => {
    exited = true;
    gone('exited');
  });
  worker.unref();
  return {
    get alive() {
      return alive;
    },
    run(batch) {
      if (!alive) return Promise.reject(Object.assign(new Error('SQLite background worker stopped'), { code: 'SQLITE_BUSY' }));
      return new Promise<void>((resolve, reject) => {
        const id = nextId++;
        waiting.set(id, { resolve, reject });
        // Keeps the process alive while a batch is being written (close() waits for it anyway).
        if (waiting.size === 1) worker.ref();
        const flat: unknown[] = [];
        for (const s of batch) flat.push(s.sql, s.parameters);
        worker.postMessage({ id, batch: flat });
      });
    },
    stop: () =>
      new Promise<void>((resolve) => {
        if (exited) return resolve();
        alive = false;
        const t = setTimeout(() => void worker.terminate().then(() => resolve()), 2000);
        worker.once('exit', () => {
          clearTimeout(t);
          resolve();
        });
        worker.postMessage('stop');
      }),
  };
}

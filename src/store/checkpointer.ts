import { Worker } from 'node:worker_threads';
import type { SqliteWorkerData, WorkerReply, WorkerRequest } from './sqlite-worker.js';

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
// One thread for both, so the gateway carries one extra isolate, not two. The thread's code is
// sqlite-worker.ts.

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
  const workerData: SqliteWorkerData = { path, checkpointMs: opts.checkpointMs, busyMs: opts.busyMs };
  // The compiled module beside this one (dist/store/sqlite-worker.js; the tests' loader maps it to the .ts source).
  const worker = new Worker(new URL('./sqlite-worker.js', import.meta.url), { workerData });
  const waiting = new Map<number, { resolve(): void; reject(err: unknown): void }>();
  let nextId = 1;
  let alive = true;
  let exited = false;
  const gone = (why: string) => {
    alive = false;
    for (const w of waiting.values()) w.reject(Object.assign(new Error(`SQLite background worker stopped: ${why}`), { code: 'SQLITE_BUSY' }));
    waiting.clear();
  };
  const send = (m: WorkerRequest) => worker.postMessage(m);
  worker.on('message', (m: WorkerReply) => {
    if ('checkpointError' in m) return opts.onError(`WAL checkpoint failed: ${m.checkpointError}`);
    const w = waiting.get(m.id);
    if (!w) return;
    waiting.delete(m.id);
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
        send({ id, batch: flat });
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
        send('stop');
      }),
  };
}

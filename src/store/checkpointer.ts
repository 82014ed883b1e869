import { Worker } from 'node:worker_threads';
import { createRequire } from 'node:module';

// SQLite in WAL mode fsyncs only when it checkpoints, and by default the writing connection
// checkpoints itself, on the event loop, stalling every request for the length of an fsync. Here a
// worker thread with its own connection checkpoints instead (PASSIVE: it never blocks the writer),
// and the gateway's connection turns its automatic checkpoints off.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path);
db.pragma('busy_timeout = 5000');
const timer = setInterval(() => {
  try { db.pragma('wal_checkpoint(PASSIVE)'); } catch (err) { parentPort.postMessage(String(err && err.message)); }
}, workerData.everyMs);
parentPort.on('message', (m) => {
  if (m === 'stop') { clearInterval(timer); try { db.pragma('wal_checkpoint(PASSIVE)'); } catch {} db.close(); process.exit(0); }
});
`;

export interface Checkpointer {
  stop(): Promise<void>;
}

export function startCheckpointer(path: string, everyMs = 1000, onError: (message: string) => void = () => {}): Checkpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { path, driver, everyMs } });
  worker.on('message', (m) => onError(`WAL checkpoint failed: ${String(m)}`));
  worker.on('error', (err) => onError(`WAL checkpointer stopped: ${err.message}`));
  worker.unref();
  return {
    stop: () =>
      new Promise<void>((resolve) => {
        const t = setTimeout(() => void worker.terminate().then(() => resolve()), 2000);
        worker.once('exit', () => {
          clearTimeout(t);
          resolve();
        });
        worker.postMessage('stop');
      }),
  };
}

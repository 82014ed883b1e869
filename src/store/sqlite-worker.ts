import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

// The SQLite background worker's thread (started by checkpointer.ts): its own connection to the
// database file, for WAL checkpoints and the batches the event loop must not write itself.

/** What the thread is started with. */
export interface SqliteWorkerData {
  path: string;
  /** PASSIVE checkpoint period; 0: no checkpoints (the gateway's connection keeps its own). */
  checkpointMs: number;
  /** How long a batch waits for a write lock another connection holds. */
  busyMs: number;
}

/** A batch to write as one transaction: SQL text and its parameters, alternating. */
export interface BatchMessage {
  id: number;
  batch: unknown[];
}

/** What the thread answers: a batch committed or failed, or a checkpoint failed. */
export type WorkerReply = { id: number; error?: { message: string; code?: string } } | { checkpointError: string };

/** 'stop' ends the thread after a last checkpoint. */
export type WorkerRequest = BatchMessage | 'stop';

const port = parentPort!;
const data = workerData as SqliteWorkerData;
const db = new Database(data.path);
db.pragma(`busy_timeout = ${data.busyMs}`);
// Its commits must not checkpoint inline either: the timer below does, PASSIVE.
if (data.checkpointMs > 0) db.pragma('wal_autocheckpoint = 0');

const statements = new Map<string, Database.Statement>();
function prepared(text: string): Database.Statement {
  let s = statements.get(text);
  if (!s) {
    if (statements.size >= 64) statements.clear();
    s = db.prepare(text);
    statements.set(text, s);
  }
  return s;
}

const runBatch = db.transaction((batch: unknown[]) => {
  for (let i = 0; i < batch.length; i += 2) prepared(batch[i] as string).run(batch[i + 1] as unknown[]);
});

function reply(message: WorkerReply): void {
  port.postMessage(message);
}

function checkpoint(): void {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch (err) {
    reply({ checkpointError: (err as Error).message });
  }
}

const timer = data.checkpointMs > 0 ? setInterval(checkpoint, data.checkpointMs) : null;

port.on('message', (m: WorkerRequest) => {
  if (m === 'stop') {
    if (timer) clearInterval(timer);
    if (data.checkpointMs > 0) checkpoint();
    db.close();
    port.close();
    return;
  }
  try {
    runBatch.immediate(m.batch);
    reply({ id: m.id });
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    reply({ id: m.id, error: { message: (err as Error).message, code: typeof code === 'string' ? code : undefined } });
  }
});

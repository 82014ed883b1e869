import type { Kysely, Transaction } from 'kysely';
import type { Database } from './schema.js';

type Work<T> = (trx: Transaction<Database>) => Promise<T>;

interface Pending {
  work: Work<unknown>;
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

/**
 * Group commit for SQLite, whose one connection runs one transaction at a time and pays most of a
 * small write transaction's cost at COMMIT. Units of work submitted while a batch is being written
 * (or in the same event-loop turn) share the next transaction; each caller's promise settles only
 * after that transaction committed, so every caller still sees its own work as durable and
 * atomic. A unit must not throw to undo its own writes: an error rolls back the whole batch and
 * rejects every unit in it (each is then free to retry). At concurrency 1 nothing waits: a lone
 * unit starts on the next turn.
 */
export class GroupCommit {
  private queue: Pending[] = [];
  private running = false;

  constructor(private readonly db: Kysely<Database>) {}

  run<T>(work: Work<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work: work as Work<unknown>, resolve: resolve as (v: unknown) => void, reject });
      if (!this.running) {
        this.running = true;
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length) {
      const batch = this.queue;
      this.queue = [];
      const results: unknown[] = [];
      try {
        await this.db.transaction().execute(async (trx) => {
          for (const item of batch) results.push(await item.work(trx));
        });
        batch.forEach((item, i) => item.resolve(results[i]));
      } catch (err) {
        for (const item of batch) item.reject(err);
      }
    }
    this.running = false;
  }
}

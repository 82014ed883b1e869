import type { UsageEntry, UsageRepo } from '../store/repos/usage.js';

/**
 * The usage ledger: one row per request, written off the request path. Entries are buffered
 * and inserted in batches every `flushMs` or when `batchSize` are waiting; close() writes the rest.
 */
export class UsageLedger {
  private buffer: UsageEntry[] = [];
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly repo: UsageRepo,
    private readonly onError: (err: unknown) => void,
    private readonly flushMs = 200,
    private readonly batchSize = 500,
  ) {}

  record(entry: Omit<UsageEntry, 'created_at'> & { created_at?: number }): void {
    this.buffer.push({ ...entry, created_at: entry.created_at ?? Date.now() });
    if (this.buffer.length >= this.batchSize) void this.flush();
    else if (!this.timer) {
      this.timer = setTimeout(() => void this.flush(), this.flushMs);
      this.timer.unref();
    }
  }

  /** Writes everything buffered so far; resolves when it is in the database. */
  flush(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    const batch = this.buffer;
    this.buffer = [];
    this.flushing = this.flushing.then(async () => {
      if (!batch.length) return;
      try {
        await this.repo.insertMany(batch);
      } catch (err) {
        this.onError(err);
      }
    });
    return this.flushing;
  }

  close(): Promise<void> {
    return this.flush();
  }
}

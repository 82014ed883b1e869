import type { TaskLog } from './log.js';

export interface ClaimWorkerSettings {
  tick_ms: number;
  concurrency: number;
}

/**
 * The loop shared by the archive and the webhook sender: every `tick_ms` (or at once when woken)
 * claim up to `concurrency` minus what is in flight, and work each claimed item in the background.
 * stop() stops claiming, aborts `signal`, waits for the items in flight and then calls `release`.
 */
export abstract class ClaimWorker<T> {
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  private ticking: Promise<void> = Promise.resolve();
  private readonly inflight = new Map<string, Promise<void>>();
  private readonly abort = new AbortController();
  protected readonly signal = this.abort.signal;

  protected constructor(
    private readonly what: string,
    private readonly settings: ClaimWorkerSettings,
    protected readonly log: TaskLog,
  ) {}

  /** Claims up to `room` items. */
  protected abstract claim(now: number, room: number): Promise<T[]>;
  protected abstract idOf(item: T): string;
  protected abstract work(item: T): Promise<void>;
  /** Hands this instance's claims back (on stop). */
  protected abstract release(): Promise<void>;
  /** Periodic chores before claiming (retention). */
  protected async beforeClaim(_now: number): Promise<void> {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.ticking;
    this.abort.abort();
    await Promise.allSettled([...this.inflight.values()]);
    await this.release().catch(() => undefined);
  }

  /** Looks for work now rather than at the next tick. */
  wake(): void {
    if (!this.running) return;
    if (this.timer) clearTimeout(this.timer);
    this.schedule(0);
  }

  private schedule(ms: number): void {
    if (!this.running) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.ticking = this.ticking
        .then(() => this.tick())
        .catch((err: unknown) => this.log('error', `${this.what}: tick failed`, { error: (err as Error).message }))
        .then(() => {
          if (!this.timer) this.schedule(this.settings.tick_ms);
        });
    }, ms);
    this.timer.unref();
  }

  async tick(now = Date.now()): Promise<void> {
    await this.beforeClaim(now);
    const room = this.settings.concurrency - this.inflight.size;
    if (room <= 0) return;
    for (const item of await this.claim(now, room)) {
      const id = this.idOf(item);
      if (this.inflight.has(id)) continue;
      const p = this.work(item)
        .catch((err: unknown) => this.log('error', `${this.what}: failed unexpectedly`, { id, error: (err as Error).message }))
        .finally(() => this.inflight.delete(id));
      this.inflight.set(id, p);
    }
  }
}

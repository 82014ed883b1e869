import { isDatabaseUnavailable } from '../store/unavailable.js';
import type { TaskLog } from './log.js';

export interface ClaimWorkerSettings {
  tick_ms: number;
  concurrency: number;
}

/**
 * The loop shared by the poller, the archive and the webhook sender: every `tick_ms` (or at once
 * when woken) claim up to `concurrency` minus what is in hand, and work each claimed item in the
 * background. When a claim came back full there is probably more due: the worker claims again as
 * soon as half its room is free instead of waiting for the next tick. An unreachable database is
 * reported once per outage and retried every second. stop() stops claiming, aborts `signal`, waits
 * for the items in hand and then calls `release`.
 */
export abstract class ClaimWorker<T> {
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  private ticking: Promise<void> = Promise.resolve();
  private readonly inflight = new Map<string, Promise<void>>();
  private readonly abort = new AbortController();
  protected readonly signal = this.abort.signal;
  /** The last claim filled all the room it was given. */
  private full = false;
  /** A claim at once is already scheduled. */
  private soon = false;
  /** The last tick found the database unavailable. */
  private databaseDown = false;

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
  /** Periodic chores before claiming (retention, sweeps). */
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
    if (!this.running || this.soon) return;
    if (this.timer) clearTimeout(this.timer);
    this.soon = true;
    this.schedule(0);
  }

  private schedule(ms: number): void {
    if (!this.running) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.soon = false;
      let next = this.settings.tick_ms;
      this.ticking = this.ticking
        .then(() => this.tick())
        .then(
          () => {
            if (this.databaseDown) this.log('warn', `${this.what}: the database answers again`);
            this.databaseDown = false;
          },
          (err: unknown) => {
            if (!isDatabaseUnavailable(err)) return this.log('error', `${this.what}: tick failed`, { error: (err as Error).message });
            next = Math.max(next, 1000);
            if (!this.databaseDown) this.log('error', `${this.what}: the database is unavailable; retrying every second`, { error: (err as Error).message });
            this.databaseDown = true;
          },
        )
        .then(() => {
          if (!this.timer) this.schedule(next);
        });
    }, ms);
    this.timer.unref();
  }

  async tick(now = Date.now()): Promise<void> {
    await this.beforeClaim(now);
    const room = this.settings.concurrency - this.inflight.size;
    if (room <= 0) return;
    const items = await this.claim(now, room);
    this.full = items.length >= room;
    for (const item of items) {
      const id = this.idOf(item);
      if (this.inflight.has(id)) continue;
      const p = this.work(item)
        .catch((err: unknown) => this.log('error', `${this.what}: failed unexpectedly`, { id, error: (err as Error).message }))
        .finally(() => {
          this.inflight.delete(id);
          // More was due than fitted: refill once half the room is free.
          if (this.full && this.inflight.size <= this.settings.concurrency / 2) this.wake();
        });
      this.inflight.set(id, p);
    }
  }
}

import type { ChannelConfig, Config } from '../config/schema.js';
import { randomBase62 } from '../auth/keys.js';
import { UpstreamFailure } from '../upstream/failure.js';
import type { UpstreamClient } from '../upstream/client.js';
import type { BillableUnits } from '../providers/video-types.js';
import { bindTask } from './binding.js';
import type { TaskRow, TasksRepo } from '../store/repos/tasks.js';
import { isDatabaseUnavailable } from '../store/unavailable.js';
import type { TaskTransitions } from './transitions.js';
import { isTerminal } from './status.js';
import type { TaskLog } from './log.js';

export interface PollerDeps {
  repo: TasksRepo;
  transitions: TaskTransitions;
  upstream: UpstreamClient;
  config: Pick<Config, 'tasks' | 'channels'>;
  log: TaskLog;
}

/** How often the poller looks for finished tasks whose credit hold a dead process left open. */
const SWEEP_EVERY_MS = 30_000;

/**
 * Polls open video tasks. Every `tick_ms` it claims due tasks with a lease (so each due task is
 * polled by one instance per cycle, and a dead instance's tasks return after `lease_ms`), then
 * polls them with at most `poll_concurrency` requests in flight per channel. A provider 429/5xx or
 * network error backs the task off exponentially up to `max_backoff_ms`; a task open past its
 * deadline (execution_expires_after + grace_s) fails and is refunded.
 */
export class Poller {
  readonly owner = `poller-${randomBase62(12)}`;
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  private ticking: Promise<void> = Promise.resolve();
  private readonly inflight = new Set<string>();
  private readonly lanes = new Map<string, { active: number; queue: TaskRow[] }>();
  private drained: (() => void) | null = null;
  private lastSweep = 0;
  /** The last tick found the database unavailable (reported once per outage). */
  private databaseDown = false;
  /** Aborted by stop(), so shutdown never waits for a hung provider. */
  private readonly abort = new AbortController();

  constructor(private readonly d: PollerDeps) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.schedule(0);
  }

  /** Stops claiming, waits for polls in flight, and hands the leases back for another instance. */
  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.ticking;
    this.abort.abort();
    for (const lane of this.lanes.values()) {
      for (const row of lane.queue) this.inflight.delete(row.task_id);
      lane.queue = [];
    }
    if (this.inflight.size) await new Promise<void>((resolve) => (this.drained = resolve));
    await this.d.repo.releaseLeases(this.owner).catch(() => undefined);
  }

  private schedule(ms: number): void {
    if (!this.running) return;
    this.timer = setTimeout(() => {
      let next = this.d.config.tasks.tick_ms;
      this.ticking = this.tick().then(
        () => {
          if (this.databaseDown) this.d.log('warn', 'video task poller: the database answers again');
          this.databaseDown = false;
        },
        (err: unknown) => {
          // An unreachable database is reported once per outage and retried every second, not every tick.
          if (!isDatabaseUnavailable(err)) return this.d.log('error', 'video task poller: tick failed', { error: (err as Error).message });
          next = Math.max(next, 1000);
          if (!this.databaseDown) this.d.log('error', 'video task poller: the database is unavailable; retrying every second', { error: (err as Error).message });
          this.databaseDown = true;
        },
      );
      void this.ticking.then(() => this.schedule(next));
    }, ms);
    this.timer.unref();
  }

  /** One cycle: claim what is due (up to `batch` tasks in hand) and start polling it. */
  async tick(now = Date.now()): Promise<void> {
    const s = this.d.config.tasks;
    if (now - this.lastSweep >= SWEEP_EVERY_MS) {
      this.lastSweep = now;
      await this.sweepOpenHolds();
    }
    const room = s.batch - this.inflight.size;
    if (room <= 0) return;
    const rows = await this.d.repo.claimDue(this.owner, now, now + s.lease_ms, now + s.poll_interval_ms, room);
    for (const row of rows) {
      if (this.inflight.has(row.task_id)) continue;
      this.inflight.add(row.task_id);
      const lane = this.lane(row.channel);
      lane.queue.push(row);
      this.pump(row.channel);
    }
  }

  private lane(channel: string) {
    let lane = this.lanes.get(channel);
    if (!lane) {
      lane = { active: 0, queue: [] };
      this.lanes.set(channel, lane);
    }
    return lane;
  }

  private channel(name: string): ChannelConfig | undefined {
    return this.d.config.channels.find((c) => c.name === name);
  }

  /** Starts queued polls of a channel while it has fewer than `poll_concurrency` in flight. */
  private pump(channelName: string): void {
    const lane = this.lane(channelName);
    const limit = this.channel(channelName)?.poll_concurrency ?? 1;
    while (lane.active < limit && lane.queue.length) {
      const row = lane.queue.shift()!;
      lane.active++;
      void this.pollTask(row)
        .catch((err: unknown) => this.d.log('error', 'video task: poll failed', { task_id: row.task_id, error: (err as Error).message }))
        .finally(() => {
          lane.active--;
          this.inflight.delete(row.task_id);
          if (this.running) this.pump(channelName);
          if (!this.inflight.size && this.drained) {
            this.drained();
            this.drained = null;
          }
        });
    }
  }

  /**
   * Polls one task once and applies the answer; a task still open past its deadline then fails.
   * Public so tests can race two pollers on one task.
   */
  async pollTask(row: TaskRow, now = Date.now()): Promise<TaskRow> {
    const after = await this.pollOnce(row, now);
    if (!isTerminal(after.status) && Date.now() >= after.deadline_at) return this.d.transitions.timeout(after);
    return after;
  }

  private async pollOnce(row: TaskRow, now: number): Promise<TaskRow> {
    const bound = bindTask(this.d.config.channels, row);
    if (!bound) {
      this.d.log('warn', 'video task: its channel is no longer configured for video; backing off', { task_id: row.task_id, channel: row.channel });
      return this.backOff(row, now, 0);
    }
    let raw: Record<string, unknown>;
    try {
      raw = await bound.adapter.get({ upstream: this.d.upstream, signal: this.abort.signal }, bound.target, row.upstream_id);
    } catch (err) {
      if (!(err instanceof UpstreamFailure)) throw err;
      // Shutting down: leave the task as it is; the next owner polls it.
      if (err.kind === 'aborted') return row;
      if (err.kind === 'status' && err.status === 404) {
        // The provider no longer knows the task (deleted, or older than its retention): it will never finish.
        return this.d.transitions.fail(row, `${err.providerCode || 'not_found'}: ${err.message}`, now);
      }
      return this.backOff(row, now, err.retryAfterS);
    }
    return this.d.transitions.apply(row, raw, bound.adapter.view(raw), Date.now());
  }

  /** Exponential backoff from the poll interval, at least the provider's Retry-After, at most max_backoff_ms. */
  private async backOff(row: TaskRow, now: number, retryAfterS: number): Promise<TaskRow> {
    const s = this.d.config.tasks;
    const failures = row.poll_failures + 1;
    const exp = s.poll_interval_ms * 2 ** Math.min(failures, 20);
    const delay = Math.min(s.max_backoff_ms, Math.max(exp, retryAfterS * 1000));
    await this.d.repo.backOff(row.task_id, row.status, now + delay, failures);
    return { ...row, next_poll_at: now + delay, poll_failures: failures };
  }

  /** Closes the holds of finished tasks left open by a process that died between move and settle. */
  async sweepOpenHolds(): Promise<void> {
    for (const row of await this.d.repo.finishedWithOpenHold(100)) {
      const bound = bindTask(this.d.config.channels, row);
      let usage: BillableUnits | null = null;
      if (bound && row.status === 'SUCCESS') {
        try {
          usage = bound.adapter.view(JSON.parse(row.data) as Record<string, unknown>).usage;
        } catch {
          usage = null;
        }
      }
      await this.d.transitions.closeHold(row, usage, row.fail_reason.startsWith('timeout:') ? 504 : 502);
    }
  }
}

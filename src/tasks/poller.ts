import type { ChannelConfig, Config } from '../config/schema.js';
import { randomBase62 } from '../auth/keys.js';
import { UpstreamFailure } from '../upstream/failure.js';
import type { UpstreamClient } from '../upstream/client.js';
import type { BillableUnits } from '../providers/video-types.js';
import { bindTask } from './binding.js';
import type { TaskRow, TasksRepo } from '../store/repos/tasks.js';
import { ClaimWorker } from './claim-worker.js';
import { performance } from 'node:perf_hooks';
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

/** How one provider read went, for the poll latency histogram. */
export type PollObserver = (provider: string, outcome: 'ok' | 'error', seconds: number) => void;

/** At most `limit` polls of one channel at a time; the rest wait their turn (or give up on stop). */
class Lane {
  active = 0;
  private readonly waiting: (() => void)[] = [];

  /** Resolves once a slot is free (true), or false when `signal` is aborted first. */
  async enter(limit: number, signal: AbortSignal): Promise<boolean> {
    while (this.active >= limit) {
      if (signal.aborted) return false;
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
    if (signal.aborted) return false;
    this.active++;
    return true;
  }

  leave(): void {
    this.active--;
    this.waiting.shift()?.();
  }

  /** Lets every waiting poll go (on stop: they see the aborted signal and give up). */
  flush(): void {
    for (const resolve of this.waiting.splice(0)) resolve();
  }
}

/**
 * Polls open video tasks (one ClaimWorker loop): every `tick_ms` it claims due tasks with a lease
 * (so each due task is polled by one instance per cycle, and a dead instance's tasks return after
 * `lease_ms`), up to `batch` in hand, claiming again as soon as half of those are done when more
 * is due; it polls them with at most `poll_concurrency` requests in flight per channel. A provider
 * 429/5xx or network error backs the task off exponentially up to `max_backoff_ms`; a task open
 * past its deadline (execution_expires_after + grace_s) fails and is refunded.
 */
export class Poller extends ClaimWorker<TaskRow> {
  readonly owner = `poller-${randomBase62(12)}`;
  private readonly lanes = new Map<string, Lane>();
  private lastSweep = 0;
  private observe: PollObserver | null = null;

  constructor(private readonly d: PollerDeps) {
    const tasks = () => d.config.tasks;
    super('video task poller', { get tick_ms() { return tasks().tick_ms; }, get concurrency() { return tasks().batch; } }, d.log);
    this.signal.addEventListener('abort', () => {
      for (const lane of this.lanes.values()) lane.flush();
    });
  }

  /** Installs the poll latency histogram (built with the other task metrics). */
  usePollObserver(observe: PollObserver): void {
    this.observe = observe;
  }

  protected claim(now: number, room: number): Promise<TaskRow[]> {
    const s = this.d.config.tasks;
    return this.d.repo.claimDue(this.owner, now, now + s.lease_ms, now + s.poll_interval_ms, room, now + s.callback_poll_interval_ms);
  }

  protected idOf(row: TaskRow): string {
    return row.task_id;
  }

  /** Polls a claimed task when its channel has a free slot; a task still waiting at stop is left to the next owner. */
  protected async work(row: TaskRow): Promise<void> {
    let lane = this.lanes.get(row.channel);
    if (!lane) this.lanes.set(row.channel, (lane = new Lane()));
    const limit = this.channel(row.channel)?.poll_concurrency ?? 1;
    if (!(await lane.enter(limit, this.signal))) return;
    try {
      await this.pollTask(row);
    } catch (err) {
      this.d.log('error', 'video task: poll failed', { task_id: row.task_id, error: (err as Error).message });
    } finally {
      lane.leave();
    }
  }

  protected release(): Promise<void> {
    return this.d.repo.releaseLeases(this.owner);
  }

  protected override async beforeClaim(now: number): Promise<void> {
    if (now - this.lastSweep < SWEEP_EVERY_MS) return;
    this.lastSweep = now;
    await this.sweepOpenHolds();
  }

  private channel(name: string): ChannelConfig | undefined {
    return this.d.config.channels.find((c) => c.name === name);
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
    const started = performance.now();
    try {
      raw = await bound.adapter.get({ upstream: this.d.upstream, signal: this.signal }, bound.target, row.upstream_id);
      this.observe?.(bound.channel.type, 'ok', (performance.now() - started) / 1000);
    } catch (err) {
      if (!(err instanceof UpstreamFailure)) throw err;
      if (err.kind !== 'aborted') this.observe?.(bound.channel.type, 'error', (performance.now() - started) / 1000);
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

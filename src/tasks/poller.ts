import type { ChannelConfig, Config } from '../config/schema.js';
import { randomBase62 } from '../ids.js';
import { UpstreamFailure } from '../upstream/failure.js';
import type { UpstreamClient } from '../upstream/client.js';
import type { BillableUnits } from '../providers/video-types.js';
import { bindTask, type VideoBinding } from './binding.js';
import type { TaskRow, TasksRepo } from '../store/repos/tasks.js';
import { ClaimWorker } from './claim-worker.js';
import { performance } from 'node:perf_hooks';
import type { TaskTransitions } from './transitions.js';
import { isTerminal } from './status.js';
import type { TaskLog } from './log.js';
import { inTaskSpan } from '../telemetry/tasks.js';

export interface PollerDeps {
  repo: TasksRepo;
  transitions: TaskTransitions;
  upstream: UpstreamClient;
  config: Pick<Config, 'tasks' | 'channels'>;
  log: TaskLog;
}

/** How often the poller looks for finished tasks whose credit hold a dead process left open. */
const SWEEP_EVERY_MS = 30_000;
/** Late reads of timed-out tasks per poller tick (they are rare; see lateReads). */
const LATE_READS_PER_TICK = 20;

/** How one provider read went, for the poll latency histogram. */
export type PollObserver = (provider: string, outcome: 'ok' | 'error', seconds: number) => void;
/** Sees how late each poll starts against its task's due time (seconds), by provider (channel type). */
export type PollLagObserver = (provider: string, seconds: number) => void;

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

/** A number per adapter object, to group tasks by adapter in a string key. */
const adapterNumbers = new WeakMap<object, number>();
let adaptersSeen = 0;
function adapterNumber(adapter: object): number {
  let n = adapterNumbers.get(adapter);
  if (n === undefined) adapterNumbers.set(adapter, (n = ++adaptersSeen));
  return n;
}

/** Due tasks of one channel whose adapter reads many at once, gathered from one claim. */
interface Gathered {
  bound: VideoBinding;
  rows: TaskRow[];
  done: (() => void)[];
}

/**
 * Polls open video tasks (one ClaimWorker loop): every `tick_ms` it claims due tasks with a lease
 * (so each due task is polled by one instance per cycle, and a dead instance's tasks return after
 * `lease_ms`), up to `batch` in hand, claiming again as soon as half of those are done when more
 * is due; it polls them with at most `poll_concurrency` requests in flight per channel. Where the
 * channel's adapter reads many tasks in one call (`getMany`), the due tasks of one claim and
 * channel are read in calls of up to `getManyMax` ids; a task missing from such an answer is read
 * alone. A provider 429/5xx or network error backs the task off exponentially up to
 * `max_backoff_ms`; a task open past its deadline (execution_expires_after + grace_s) fails and
 * is refunded.
 */
export class Poller extends ClaimWorker<TaskRow> {
  readonly owner = `poller-${randomBase62(12)}`;
  private readonly lanes = new Map<string, Lane>();
  private lastSweep = 0;
  private lastLateRead = 0;
  private observe: PollObserver | null = null;
  private observeLag: PollLagObserver | null = null;
  /** Claimed tasks' due times (their next_poll_at before the claim), by task id, until their poll starts. */
  private dueAt = new Map<string, number>();
  /** Bindings of (channel, model), valid while `config.channels` is the same array (a reload replaces it). */
  private bindings = new Map<string, VideoBinding | null>();
  private bindingsOf: readonly ChannelConfig[] | null = null;
  /** Rows handed to work() by the current claim, by channel and adapter, read together once the claim is handed out. */
  private gathering = new Map<string, Gathered>();

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

  /** Installs the poll lag histogram. */
  usePollLagObserver(observe: PollLagObserver): void {
    this.observeLag = observe;
  }

  protected claim(now: number, room: number): Promise<TaskRow[]> {
    const s = this.d.config.tasks;
    return this.d.repo.claimDue(this.owner, now, now + s.lease_ms, now + s.poll_interval_ms, room, now + s.callback_poll_interval_ms, this.observeLag ? this.dueAt : undefined);
  }

  /** A claimed task's poll starts: how late against its due time, once per claim. */
  private started(row: TaskRow, provider: string): void {
    const due = this.dueAt.get(row.task_id);
    if (due === undefined) return;
    this.dueAt.delete(row.task_id);
    this.observeLag?.(provider, Math.max(0, Date.now() - due) / 1000);
  }

  protected idOf(row: TaskRow): string {
    return row.task_id;
  }

  /**
   * Polls a claimed task when its channel has a free slot; a task still waiting at stop is left to
   * the next owner. Tasks whose adapter reads many at once wait for the rest of the claim (the
   * claim hands every row out in one synchronous loop) and are read together.
   */
  protected work(row: TaskRow): Promise<void> {
    const bound = this.bind(row);
    if (!bound?.adapter.getMany) return this.pollAlone(row).then(() => undefined);
    // One group per channel and adapter (a simulator channel plays several providers).
    const key = `${row.channel}\n${adapterNumber(bound.adapter)}`;
    return new Promise<void>((resolve) => {
      let g = this.gathering.get(key);
      if (!g) {
        this.gathering.set(key, (g = { bound, rows: [], done: [] }));
        if (this.gathering.size === 1) queueMicrotask(() => this.readGathered());
      }
      g.rows.push(row);
      g.done.push(resolve);
    });
  }

  protected release(): Promise<void> {
    this.dueAt.clear();
    return this.d.repo.releaseLeases(this.owner);
  }

  protected override async beforeClaim(now: number): Promise<void> {
    if (now - this.lastLateRead >= Math.min(SWEEP_EVERY_MS, this.d.config.tasks.max_backoff_ms)) {
      this.lastLateRead = now;
      await this.lateReads(now);
    }
    if (now - this.lastSweep < SWEEP_EVERY_MS) return;
    this.lastSweep = now;
    await this.sweepOpenHolds();
  }

  /**
   * Reads tasks the gateway gave up on once more, for tasks.late_read_s after their deadline: a
   * provider that reports success is recorded and charged (TaskTransitions.lateSuccess); one that
   * reports failure, or forgot the task, ends the reads. Each read is claimed by a guarded update,
   * so one instance reads a task at a time. Public so tests can run it at once.
   */
  async lateReads(now = Date.now()): Promise<void> {
    const s = this.d.config.tasks;
    for (const row of await this.d.repo.lateReadsDue(now, LATE_READS_PER_TICK)) {
      const over = s.late_read_s === 0 || now > row.deadline_at + s.late_read_s * 1000;
      const bound = over ? undefined : this.bind(row);
      if (!bound) {
        await this.d.repo.deferLateRead(row.task_id, row.next_poll_at, 0);
        continue;
      }
      const next = now + s.max_backoff_ms;
      if (!(await this.d.repo.deferLateRead(row.task_id, row.next_poll_at, next))) continue;
      await this.inLane(row.channel, async () => {
        let raw: Record<string, unknown>;
        try {
          raw = await bound.adapter.get({ upstream: this.d.upstream, signal: this.signal }, bound.target, row.upstream_id);
        } catch (err) {
          if (!(err instanceof UpstreamFailure)) throw err;
          // The provider no longer knows the task: nothing more will come of it.
          if (err.kind === 'status' && err.status === 404) await this.d.repo.deferLateRead(row.task_id, next, 0);
          return;
        }
        const view = bound.adapter.view(raw, Date.now());
        if (view.state === 'succeeded') {
          if (!(await this.d.transitions.lateSuccess({ ...row, next_poll_at: next }, raw, view))) await this.d.repo.deferLateRead(row.task_id, next, 0);
        } else if (view.state === 'failed' || view.state === 'cancelled' || view.state === 'expired') {
          await this.d.repo.deferLateRead(row.task_id, next, 0);
        }
      });
    }
  }

  /** Runs `fn` in a slot of the channel's lane; false when the poller stopped before a slot was free. Never throws. */
  private async inLane(channel: string, fn: () => Promise<unknown>): Promise<boolean> {
    let lane = this.lanes.get(channel);
    if (!lane) this.lanes.set(channel, (lane = new Lane()));
    const limit = this.channel(channel)?.poll_concurrency ?? 1;
    if (!(await lane.enter(limit, this.signal))) return false;
    try {
      await fn();
    } catch (err) {
      this.d.log('error', 'video task: poll failed', { channel, error: (err as Error).message });
    } finally {
      lane.leave();
    }
    return true;
  }

  private channel(name: string): ChannelConfig | undefined {
    return this.d.config.channels.find((c) => c.name === name);
  }

  /** The task's channel, adapter and target, looked up once per channel and model (until a reload). */
  private bind(row: TaskRow): VideoBinding | undefined {
    const channels = this.d.config.channels;
    if (channels !== this.bindingsOf) {
      this.bindingsOf = channels;
      this.bindings = new Map();
    }
    const key = `${row.channel}\n${row.model}`;
    let b = this.bindings.get(key);
    if (b === undefined) this.bindings.set(key, (b = bindTask(channels, row) ?? null));
    return b ?? undefined;
  }

  /** Reads what work() gathered: per channel, calls of up to getManyMax ids (one slot of its lane each). */
  private readGathered(): void {
    const groups = [...this.gathering.values()];
    this.gathering = new Map();
    for (const g of groups) {
      const max = Math.max(1, g.bound.adapter.getManyMax ?? 100);
      for (let i = 0; i < g.rows.length; i += max) {
        const rows = g.rows.slice(i, i + max);
        const done = g.done.slice(i, i + max);
        const finish = () => {
          for (const d of done) d();
        };
        // One task alone is read as one: the same single call, without a list around it.
        const read = rows.length === 1 ? this.pollAlone(rows[0]) : this.pollBatch(rows, g.bound);
        void read.then(finish, (err: unknown) => {
          this.d.log('error', 'video task: batched poll failed', { channel: rows[0].channel, error: (err as Error).message });
          finish();
        });
      }
    }
  }

  /**
   * Reads `rows` (open tasks of one channel) in one provider call and applies each answer; a task
   * missing from the answer is read alone. When the call fails as a single read would back off
   * (429, 5xx, network, timeout), every task backs off; any other failure falls back to single
   * reads. Public so tests can race two pollers' batched reads.
   */
  async pollBatch(rows: TaskRow[], bound = rows[0] && this.bind(rows[0])): Promise<TaskRow[]> {
    if (!rows.length) return [];
    if (!bound?.adapter.getMany) return Promise.all(rows.map((r) => this.pollTask(r)));
    const now = Date.now();
    let found: Map<string, Record<string, unknown>> | null = null;
    let failure: UpstreamFailure | null = null;
    const entered = await this.inLane(rows[0].channel, async () => {
      for (const row of rows) this.started(row, bound.channel.type);
      const started = performance.now();
      try {
        found = await bound.adapter.getMany!({ upstream: this.d.upstream, signal: this.signal }, bound.target, rows.map((r) => r.upstream_id));
        this.observe?.(bound.channel.type, 'ok', (performance.now() - started) / 1000);
      } catch (err) {
        if (!(err instanceof UpstreamFailure)) throw err;
        if (err.kind !== 'aborted') this.observe?.(bound.channel.type, 'error', (performance.now() - started) / 1000);
        failure = err;
      }
    });
    // Stopped (or shutting down mid-call): the tasks stay as they are for the next owner.
    if (!entered || (failure as UpstreamFailure | null)?.kind === 'aborted') return rows;
    const answers = found as Map<string, Record<string, unknown>> | null;
    if (!answers) {
      const err = failure as UpstreamFailure | null;
      if (err?.retryable) return Promise.all(rows.map((r) => this.backOff(r, now, err.retryAfterS)));
      if (err) this.d.log('warn', 'video task: batched read refused; reading the tasks one by one', { channel: rows[0].channel, status: err.status, error: err.message });
      return Promise.all(rows.map((r) => this.pollAlone(r)));
    }
    const at = Date.now();
    return Promise.all(
      rows.map(async (row) => {
        try {
          const raw = answers.get(row.upstream_id);
          if (!raw) return await this.pollAlone(row);
          return await inTaskSpan('video_task poll', row, async () => this.finish(await this.d.transitions.apply(row, raw, bound.adapter.view(raw, at), at)), { 'mediagate.task.batched': true });
        } catch (err) {
          this.d.log('error', 'video task: poll failed', { task_id: row.task_id, error: (err as Error).message });
          return row;
        }
      }),
    );
  }

  /** A single read of a task in a slot of its channel's lane; never throws (a failure is logged). */
  private async pollAlone(row: TaskRow): Promise<TaskRow> {
    let after = row;
    await this.inLane(row.channel, async () => {
      try {
        after = await this.pollTask(row);
      } catch (err) {
        this.d.log('error', 'video task: poll failed', { task_id: row.task_id, error: (err as Error).message });
      }
    });
    return after;
  }

  /**
   * Polls one task once and applies the answer; a task still open past its deadline then fails.
   * Public so tests can race two pollers on one task.
   */
  async pollTask(row: TaskRow, now = Date.now()): Promise<TaskRow> {
    return inTaskSpan('video_task poll', row, async (traceparent) => this.finish(await this.pollOnce(row, now, traceparent)));
  }

  /** A task still open after a poll past its deadline fails. */
  private finish(after: TaskRow): Promise<TaskRow> | TaskRow {
    if (!isTerminal(after.status) && Date.now() >= after.deadline_at) return this.d.transitions.timeout(after);
    return after;
  }

  private async pollOnce(row: TaskRow, now: number, traceparent = ''): Promise<TaskRow> {
    const bound = this.bind(row);
    if (!bound) {
      this.d.log('warn', 'video task: its channel is no longer configured for video; backing off', { task_id: row.task_id, channel: row.channel });
      return this.backOff(row, now, 0);
    }
    let raw: Record<string, unknown>;
    this.started(row, bound.channel.type);
    const started = performance.now();
    try {
      raw = await bound.adapter.get({ upstream: this.d.upstream, signal: this.signal, traceparent: traceparent || undefined }, bound.target, row.upstream_id);
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
    const at = Date.now();
    return this.d.transitions.apply(row, raw, bound.adapter.view(raw, at), at);
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

import type { Principal } from '../auth/principal.js';
import { mayUseModel } from '../auth/principal.js';
import type { Config } from '../config/schema.js';
import { GatewayError, errors, statusOf } from '../http/errors.js';
import type { CreditService } from '../limits/credit.js';
import type { UsageLedger } from '../limits/ledger.js';
import { videoCostMicros, videoTokens } from '../limits/pricing.js';
import type { Catalog } from '../relay/catalog.js';
import type { Relay } from '../relay/relay.js';
import { targetFor } from '../upstream/target.js';
import { UpstreamFailure } from '../upstream/failure.js';
import type { UpstreamClient } from '../upstream/client.js';
import { videoAdapterFor } from '../providers/videos.js';
import type { TaskRow, TasksRepo } from '../store/repos/tasks.js';
import { retryWhileUnavailable } from '../store/unavailable.js';
import { redactDeep } from '../http/redact.js';
import { TASK_ID, invalidTaskId, parseCreateBody, taskNotExist } from './request.js';
import { toTaskRecord, type TaskRecord } from './record.js';
import type { TaskTransitions } from './transitions.js';
import { urlNeedsRefresh } from './url-expiry.js';
import type { TaskLog } from './log.js';

export interface TaskServiceDeps {
  config: Config;
  repo: TasksRepo;
  catalog: Catalog;
  relay: Relay;
  upstream: UpstreamClient;
  credit: CreditService;
  ledger: UsageLedger;
  transitions: TaskTransitions;
  log: TaskLog;
}

/** Provider executions expire after 48 h unless the request says otherwise (Ark's default). */
const DEFAULT_EXECUTION_EXPIRES_S = 172_800;

/**
 * Video tasks as the routes see them: create (validate, reserve credit, create at the provider
 * through the relay, store SUBMITTED) and read (ownership, fresh download URL).
 */
export class TaskService {
  private readonly refreshing = new Map<string, Promise<TaskRow>>();

  /** Checks a create body's callback_url / callback_events (installed by the webhooks part). */
  private subscribe: ((p: Principal, body: Record<string, unknown>) => Promise<{ url: string; events: string[] } | null>) | null = null;

  constructor(private readonly d: TaskServiceDeps) {}

  useSubscriptions(check: (p: Principal, body: Record<string, unknown>) => Promise<{ url: string; events: string[] } | null>): void {
    this.subscribe = check;
  }

  /** `onRecorded` is told when the request's usage row is written (the route's one-row-per-request bookkeeping). */
  async create(p: Principal, body: unknown, onRecorded: () => void = () => {}): Promise<TaskRecord> {
    const started = Date.now();
    const parsed = parseCreateBody(body);
    const model = this.d.catalog.get(parsed.model);
    if (!model) throw errors.modelNotFound(parsed.model);
    if (!mayUseModel(p, model.id)) throw errors.modelNotAllowed(model.id);
    if (model.config.kind !== 'video') throw errors.invalidRequest(`The model "${model.id}" does not generate video; pick a video model (see GET /v1/models).`, 'model');
    const { mode } = parsed.request;
    const modes = model.config.modes ?? [];
    if (!modes.includes(mode)) {
      throw new GatewayError(400, 'unsupported_mode', `The model "${model.id}" does not support ${mode} generation; it supports: ${modes.join(', ') || 'none'}.`, {}, 'images');
    }

    // Where the task's webhooks go: checked (URL, address, signing secret) before any credit is held.
    const callback = this.subscribe ? await this.subscribe(p, body as Record<string, unknown>) : null;

    const estimated = videoTokens(parsed.estimate.resolution, parsed.estimate.ratio, parsed.estimate.seconds);
    // A task's hold outlives the request (minutes): a reservation row, not this instance's lease.
    const hold = await this.d.credit.reserveDurable(p, videoCostMicros(model.config, estimated));
    let channelName = '';
    const record = (status: number) => {
      onRecorded();
      this.d.ledger.record({ key_id: p.keyId, model: model.id, channel: channelName, endpoint: 'video', status, input_units: 0, output_units: 0, cost_micros: 0, latency_ms: Date.now() - started });
    };

    let row: TaskRow;
    try {
      const { created, target } = await this.d.relay.run(model, async (target) => {
        const adapter = videoAdapterFor(target.channel.type);
        // A misconfigured channel (a chat wire format serving a video model): try the next one.
        if (!adapter) throw new UpstreamFailure('status', `channel type "${target.channel.type}" has no video tasks`, 501);
        channelName = target.channel.name;
        return { created: await adapter.create({ upstream: this.d.upstream }, target, parsed.request), target };
      });
      if (!TASK_ID.test(created.id)) throw errors.upstreamError('The upstream provider returned a task id the gateway cannot use.');
      const now = Date.now();
      const expiresS = parsed.request.params.execution_expires_after ?? DEFAULT_EXECUTION_EXPIRES_S;
      row = {
        task_id: created.id,
        key_id: p.keyId,
        model: model.id,
        channel: target.channel.name,
        upstream_model: target.upstreamModel,
        action: parsed.action,
        status: 'SUBMITTED',
        fail_reason: '',
        submit_time: Math.floor(now / 1000),
        start_time: 0,
        finish_time: 0,
        progress: '0%',
        // The provider's latest word on the task is its create answer ({"id": …}) until the first poll.
        data: JSON.stringify(redactDeep(created)),
        reservation_id: hold.reservationId,
        estimated_units: estimated,
        next_poll_at: now + this.d.config.tasks.poll_interval_ms,
        lease_owner: null,
        lease_until: 0,
        poll_failures: 0,
        deadline_at: now + (expiresS + this.d.config.tasks.grace_s) * 1000,
        url_expires_at: 0,
        updated_at: now,
      };
      try {
        // The provider already runs the task: a dropped database connection must not lose it.
        await retryWhileUnavailable(() => this.d.repo.insert(row, callback ? { task_id: row.task_id, url: callback.url, events: JSON.stringify(callback.events) } : undefined));
      } catch (err) {
        this.d.log('error', 'video task: storing a created task failed', { task_id: created.id, error: (err as Error).message });
        if (statusOf(err) === 503) throw err;
        throw errors.upstreamError('The gateway could not record the task the provider created.');
      }
    } catch (err) {
      await this.d.credit.release(hold);
      record(statusOf(err));
      throw err;
    }
    record(200);
    return toTaskRecord(row);
  }

  async read(p: Principal, taskId: string): Promise<TaskRecord> {
    if (!TASK_ID.test(taskId)) throw invalidTaskId();
    let row = await this.d.repo.get(taskId);
    // Another key's task answers exactly like a task that does not exist.
    if (!row || row.key_id !== p.keyId) throw taskNotExist();
    if (row.status === 'SUCCESS' && urlNeedsRefresh(row.fail_reason, row.url_expires_at)) row = await this.refreshUrl(row);
    return toTaskRecord(row);
  }

  /**
   * Re-reads a finished task from its provider for a newly signed URL; one fetch per task at a
   * time. On failure the stored row comes back unchanged. (Also used by /content and the archive
   * when a download is refused because the URL expired early.)
   */
  refreshUrl(row: TaskRow): Promise<TaskRow> {
    let pending = this.refreshing.get(row.task_id);
    if (!pending) {
      pending = this.fetchFresh(row).finally(() => this.refreshing.delete(row.task_id));
      this.refreshing.set(row.task_id, pending);
    }
    return pending;
  }

  private async fetchFresh(row: TaskRow): Promise<TaskRow> {
    const channel = this.d.config.channels.find((c) => c.name === row.channel);
    const adapter = channel && videoAdapterFor(channel.type);
    if (!channel || !adapter) return row;
    try {
      const raw = await adapter.get({ upstream: this.d.upstream }, targetFor(channel, row.model), row.task_id);
      return await this.d.transitions.apply(row, raw, adapter.view(raw));
    } catch (err) {
      // The stored answer is still the best one there is; the client may retry later.
      this.d.log('warn', 'video task: refreshing the video URL failed', { task_id: row.task_id, error: (err as Error).message });
      return row;
    }
  }
}

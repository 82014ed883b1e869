import type { Principal } from '../auth/principal.js';
import type { Config } from '../config/schema.js';
import { errors, statusOf } from '../http/errors.js';
import type { CreditService } from '../limits/credit.js';
import type { UsageLedger } from '../limits/ledger.js';
import { videoCostMicros, type PriceContext } from '../limits/pricing.js';
import type { Catalog } from '../relay/catalog.js';
import type { Relay } from '../relay/relay.js';
import { meteredCall, resolveModel, type MeteredRequest } from '../relay/metered.js';
import { UpstreamFailure } from '../upstream/failure.js';
import type { UpstreamClient } from '../upstream/client.js';
import type { Target } from '../upstream/target.js';
import { randomBase62 } from '../ids.js';
import type { TaskRow, TaskView, TasksRepo } from '../store/repos/tasks.js';
import { retryWhileUnavailable } from '../store/unavailable.js';
import { redactDeep } from '../http/redact.js';
import type { BillableUnits, CreatedTask } from '../providers/video-types.js';
import { TASK_ID, invalidTaskId, parseCreateBody, taskNotExist, type ParsedCreate } from './request.js';
import { asVideosApiError, nativeVideoBody, parseVideoCreate, videoMeta, type VideoMeta } from './openai-videos.js';
import { toTaskRecord, type TaskRecord } from './record.js';
import { videoPriceContext, type TaskTransitions } from './transitions.js';
import { urlNeedsRefresh } from '../providers/signed-url.js';
import { bindChannel, bindModel, bindTask, type VideoBinding } from './binding.js';
import { checkVideoRequest } from './capabilities.js';
import { newCallbackToken, providerCallbackUrl } from './provider-callbacks.js';
import type { TaskLog } from './log.js';
import { startTaskTrace } from '../telemetry/tasks.js';
import type { TraceParent } from '../telemetry/trace.js';

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

/** The public id: the provider's own when it is path-safe, else `task_` + 32 base62 characters. */
export function publicTaskId(upstreamId: string): string {
  return TASK_ID.test(upstreamId) ? upstreamId : `task_${randomBase62(32)}`;
}

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

  /**
   * `claimRow` is asked before the request's usage row is written (the route's one-row-per-request
   * bookkeeping); false means a row was already written. `departed` is aborted when the client
   * leaves: no task is created for nobody.
   */
  async create(p: Principal, body: unknown, claimRow: () => boolean = () => true, departed: AbortSignal = new AbortController().signal, trace: TraceParent | null = null): Promise<TaskRecord> {
    const parsed = parseCreateBody(body);
    return toTaskRecord(await this.start(p, parsed.model, () => ({ parsed }), body as Record<string, unknown>, claimRow, departed, trace));
  }

  /**
   * POST /v1/videos: the same task, created from the Videos API's fields; `seconds` and `size` are
   * mapped by the model's provider (openai-videos.ts). Errors about a native field name the field
   * the client sent.
   */
  async createVideo(p: Principal, body: unknown, claimRow: () => boolean = () => true, departed: AbortSignal = new AbortController().signal, trace: TraceParent | null = null): Promise<TaskRow> {
    try {
      const input = parseVideoCreate(body);
      const build = (judge: VideoBinding, modelId: string) => ({ parsed: parseCreateBody(nativeVideoBody(input, modelId, judge)), given: { seconds: input.seconds, size: input.size } });
      return await this.start(p, input.model, build, null, claimRow, departed, trace);
    } catch (err) {
      throw asVideosApiError(err);
    }
  }

  /**
   * Validates, holds credit, creates the task at the provider through the relay and stores it.
   * `build` makes the request once the model's adapter is known; `subscribeBody` is checked for
   * completion webhooks (null: the API has none).
   */
  private async start(
    p: Principal,
    modelId: string,
    build: (judge: VideoBinding, modelId: string) => { parsed: ParsedCreate; given?: { seconds?: string; size?: string } },
    subscribeBody: Record<string, unknown> | null,
    claimRow: () => boolean,
    departed: AbortSignal,
    trace: TraceParent | null,
  ): Promise<TaskRow> {
    const started = Date.now();
    const model = resolveModel(this.d.catalog, p, modelId, 'video', (m) => `The model "${m.id}" does not generate video; pick a video model (see GET /v1/models).`);
    const judge = bindModel(model);
    // No channel of this model runs video tasks: a configuration mistake the client cannot fix.
    if (!judge) throw errors.upstreamError(`No channel of the model "${model.id}" can run video tasks.`);
    const { parsed, given } = build(judge, model.id);
    checkVideoRequest(model.id, model.config.modes ?? [], judge.adapter, judge.target.upstreamModel, parsed.request);

    // Where the task's webhooks go: checked (URL, address, signing secret) before any credit is held.
    const callback = this.subscribe && subscribeBody ? await this.subscribe(p, subscribeBody) : null;

    const estimate = judge.adapter.estimate(judge.target.upstreamModel, parsed.request);
    const priceContext = videoPriceContext(parsed.request, estimate);
    const meta = videoMeta(parsed.request, judge, estimate, given);
    const metered: MeteredRequest = {
      principal: p,
      model,
      endpoint: 'video',
      started,
      claimRow,
      departed,
      goneMessage: 'The client closed the request before the task was created.',
      holdMicros: videoCostMicros(model.config, estimate, priceContext),
      // A task's hold outlives the request (minutes): a reservation row, not this instance's lease.
      durable: true,
      trace,
    };
    // With a public URL, providers that call back are told where: a hint to poll the task now.
    const callbackToken = this.d.config.server.public_url ? newCallbackToken() : null;
    return meteredCall(
      this.d,
      metered,
      async (target) => {
        const bound = bindChannel(target.channel, model.id);
        // A misconfigured channel (a chat wire format serving a video model): try the next one.
        if (!bound) throw new UpstreamFailure('status', `channel type "${target.channel.type}" has no video tasks`, 501);
        const token = callbackToken !== null && bound.adapter.acceptsCallback ? callbackToken : null;
        const opts = token ? { callbackUrl: providerCallbackUrl(this.d.config, token) } : undefined;
        const created = await bound.adapter.create({ upstream: this.d.upstream, traceparent: target.traceparent, tracestate: target.tracestate }, bound.target, parsed.request, opts);
        // A task created without its callback is polled at the ordinary interval.
        return { created, target, expiresS: bound.adapter.expiresAfterS(parsed.request), token: created.callbackDropped ? null : token };
      },
      async ({ created, target, expiresS, token }, { hold }) => {
        const row = this.newRow(p, model.id, parsed.action, created, target, expiresS, hold.reservationId, estimate, priceContext, meta, token);
        row.trace_parent = startTaskTrace(row, target.channel.type, target.traceparent);
        try {
          // The provider already runs the task: a dropped database connection must not lose it.
          await retryWhileUnavailable(() => this.d.repo.insert(row, callback ? { task_id: row.task_id, url: callback.url, events: JSON.stringify(callback.events) } : undefined));
        } catch (err) {
          this.d.log('error', 'video task: storing a created task failed', { task_id: row.task_id, error: (err as Error).message });
          if (statusOf(err) === 503) throw err;
          throw errors.upstreamError('The gateway could not record the task the provider created.');
        }
        // The hold stays open with the task: the poller settles it from the finished task's units.
        return { value: row, status: 200, taskId: row.task_id };
      },
    );
  }

  /** The stored form of a task the provider just created: SUBMITTED, its hold, its first poll and its deadline. */
  private newRow(p: Principal, model: string, action: string, created: CreatedTask, target: Target, expiresS: number, reservationId: string | null, estimate: BillableUnits, priceContext: PriceContext, meta: VideoMeta, callbackToken: string | null): TaskRow {
    const now = Date.now();
    return {
      task_id: publicTaskId(created.upstreamId),
      upstream_id: created.upstreamId,
      key_id: p.keyId,
      model,
      channel: target.channel.name,
      upstream_model: target.upstreamModel,
      action,
      status: 'SUBMITTED',
      fail_reason: '',
      submit_time: Math.floor(now / 1000),
      start_time: 0,
      finish_time: 0,
      progress: '0%',
      // The provider's latest word on the task is its create answer until the first poll.
      data: JSON.stringify(redactDeep(created.raw)),
      reservation_id: reservationId,
      estimated_units: estimate.units,
      // The settle prices the reported units by the same rule, with the request's values for its factors.
      billing: JSON.stringify({ unit: estimate.unit, resolution: estimate.resolution, price: priceContext }),
      // A provider that calls back is polled less often: the callback is what makes it poll at once.
      next_poll_at: now + (callbackToken ? this.d.config.tasks.callback_poll_interval_ms : this.d.config.tasks.poll_interval_ms),
      lease_owner: null,
      lease_until: 0,
      poll_failures: 0,
      deadline_at: now + (expiresS + this.d.config.tasks.grace_s) * 1000,
      url_expires_at: 0,
      callback_token: callbackToken,
      updated_at: now,
      deleted_at: 0,
      video_meta: JSON.stringify(meta),
      trace_parent: '',
    };
  }

  async read(p: Principal, taskId: string): Promise<TaskRecord> {
    return toTaskRecord(await this.view(p, taskId));
  }

  /**
   * The caller's task as its read shows it (GET /v1/video/generations/{id}): only the columns the
   * answer needs; a SUCCESS whose signed URL is about to expire is first refreshed from the provider.
   */
  async view(p: Principal, taskId: string): Promise<TaskView> {
    // ownedTask's checks, in its order.
    if (!TASK_ID.test(taskId)) throw invalidTaskId();
    const view = await this.d.repo.view(taskId);
    if (!view || view.key_id !== p.keyId || view.deleted_at > 0) throw taskNotExist();
    if (view.status !== 'SUCCESS' || !urlNeedsRefresh(view.fail_reason, view.url_expires_at)) return view;
    const row = await this.d.repo.get(taskId);
    return row ? this.refreshUrl(row) : view;
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
    const bound = bindTask(this.d.config.channels, row);
    if (!bound) return row;
    try {
      const raw = await bound.adapter.get({ upstream: this.d.upstream }, bound.target, row.upstream_id);
      return await this.d.transitions.apply(row, raw, bound.adapter.view(raw));
    } catch (err) {
      // The stored answer is still the best one there is; the client may retry later.
      this.d.log('warn', 'video task: refreshing the video URL failed', { task_id: row.task_id, error: (err as Error).message });
      return row;
    }
  }
}

import type { Config } from '../config/schema.js';
import type { CreditService } from '../limits/credit.js';
import type { UsageLedger } from '../limits/ledger.js';
import { videoQuote, type PriceContext } from '../limits/pricing.js';
import { redact, redactDeep } from '../http/redact.js';
import { taskAllowsPrivateNetwork } from './binding.js';
import type { BillableUnits, ProviderTaskView, VideoGenerationRequest } from '../providers/video-types.js';
import type { TaskPatch, TaskRow, TasksRepo } from '../store/repos/tasks.js';
import { TASK_SETTLE_ENDPOINT } from '../store/repos/usage.js';
import { RANK, isTerminal, mapProviderTask, timeoutReason, type GatewayStatus } from './status.js';
import type { TaskLog } from './log.js';
import type { MoveHooks } from './move-hooks.js';
import { taskTrace } from '../telemetry/tasks.js';

// How a task moves: a provider answer (or the gateway's own timeout) becomes at most one guarded
// UPDATE, and only the caller whose UPDATE moved the task into SUCCESS or FAILURE closes its credit
// hold. So however many pollers and readers race, a task is settled or refunded exactly once.

export interface TransitionDeps {
  repo: TasksRepo;
  credit: CreditService;
  ledger: UsageLedger;
  /** Read at each use: a reload replaces `channels` and `models` on this object. */
  config: Pick<Config, 'channels' | 'models'>;
  settings: Config['tasks'];
  log: TaskLog;
  /** Archive, webhooks, logs and metrics of status moves; set after construction (they need the repo too). */
  hooks?: MoveHooks;
}

/** The progress stored with a status; reads compute the live value for running tasks. */
const STORED_PROGRESS: Record<GatewayStatus, string> = { SUBMITTED: '0%', QUEUED: '5%', IN_PROGRESS: '10%', SUCCESS: '100%', FAILURE: '100%' };


export class TaskTransitions {
  constructor(private readonly d: TransitionDeps) {}

  /**
   * Applies the provider's latest task object. Writes only when something changed; returns the
   * task as it is afterwards (re-read when another writer moved it first).
   */
  async apply(row: TaskRow, raw: Record<string, unknown>, view: ProviderTaskView, now = Date.now()): Promise<TaskRow> {
    const mapped = mapProviderTask(view, { allowPrivate: taskAllowsPrivateNetwork(this.d.config.channels, row) });
    if (!mapped) {
      this.d.log('warn', 'video task: unknown provider status; keeping the task as it is', { task_id: row.task_id, provider_status: view.rawStatus });
      return row;
    }
    const current = row.status as GatewayStatus;
    if (RANK[mapped.status] < RANK[current]) return row;
    // A finished task keeps its outcome; a SUCCESS may only take a fresh signed URL.
    if (isTerminal(current) && !(current === 'SUCCESS' && mapped.status === 'SUCCESS')) return row;

    const nowS = Math.floor(now / 1000);
    const patch: TaskPatch = {};
    // Every string from the provider, URLs included, is scrubbed before it is stored or shown. An
    // answer that serialises to exactly the stored (already scrubbed) data is unchanged: the usual
    // poll of a running task is settled by one JSON.stringify, without copying the object to scrub it.
    const plain = JSON.stringify(raw);
    const data = plain === row.data ? plain : JSON.stringify(redactDeep(raw));
    const failReason = redact(mapped.failReason);
    if (mapped.status !== current) {
      patch.status = mapped.status;
      patch.progress = STORED_PROGRESS[mapped.status];
      if ((mapped.status === 'IN_PROGRESS' || mapped.status === 'SUCCESS') && !row.start_time) patch.start_time = nowS;
      if (isTerminal(mapped.status)) {
        patch.finish_time = nowS;
        patch.lease_owner = null;
        patch.lease_until = 0;
      }
    }
    if (mapped.status === 'IN_PROGRESS' && view.progress !== null) {
      const progress = `${Math.max(10, Math.min(99, Math.floor(view.progress)))}%`;
      if (progress !== (patch.progress ?? row.progress)) patch.progress = progress;
    }
    if (failReason !== row.fail_reason) patch.fail_reason = failReason;
    if (data !== row.data) patch.data = data;
    if (mapped.status === 'SUCCESS' && view.result?.kind === 'url') {
      const expiresAt = view.result.expiresAtS * 1000;
      if (expiresAt !== row.url_expires_at) patch.url_expires_at = expiresAt;
    }
    if (row.poll_failures) patch.poll_failures = 0;
    if (!Object.keys(patch).length) return row;
    patch.updated_at = now;

    const next = { ...row, ...patch } as TaskRow;
    if (!(await this.moveWithHooks(row, current, patch, next, now))) return (await this.d.repo.get(row.task_id)) ?? row;
    if (patch.status && isTerminal(mapped.status)) await this.closeHold(next, mapped.status === 'SUCCESS' ? view.usage : null);
    return next;
  }

  /** Installs the move hooks (built after the transitions, since they read tasks too). */
  useHooks(hooks: MoveHooks): void {
    this.d.hooks = hooks;
  }

  /** The guarded move, with the rows a status change adds written in the same transaction. */
  private async moveWithHooks(row: TaskRow, from: string, patch: TaskPatch, next: TaskRow, now: number, note?: string): Promise<boolean> {
    const hooks = patch.status && patch.status !== from ? this.d.hooks : undefined;
    const extras = hooks ? await hooks.extrasFor(row, next, now) : undefined;
    if (!(await this.d.repo.move(row.task_id, from, patch, extras, note))) return false;
    hooks?.moved(row, next, now);
    return true;
  }

  /**
   * The gateway gives up on a task open past its deadline (read just before by the poll that found
   * it still open, or the provider not answering): FAILURE and a refund. The task is read again
   * later (tasks.late_read_s) in case the provider still finishes it.
   */
  timeout(row: TaskRow, now = Date.now()): Promise<TaskRow> {
    const late = this.d.settings.late_read_s > 0 ? now + this.d.settings.max_backoff_ms : 0;
    return this.fail(row, timeoutReason(this.d.settings.grace_s), now, 504, late);
  }

  /** Ends an open task in FAILURE with `reason` (the provider lost it, or the gateway gave up). */
  async fail(row: TaskRow, reason: string, now = Date.now(), ledgerStatus = 502, lateReadAt = 0): Promise<TaskRow> {
    if (isTerminal(row.status)) return row;
    const patch: TaskPatch = {
      status: 'FAILURE',
      progress: '100%',
      fail_reason: redact(reason),
      finish_time: Math.floor(now / 1000),
      lease_owner: null,
      lease_until: 0,
      updated_at: now,
      // Only a task the gateway gave up on is read again (0: never).
      next_poll_at: lateReadAt,
    };
    const next = { ...row, ...patch } as TaskRow;
    if (!(await this.moveWithHooks(row, row.status, patch, next, now))) return (await this.d.repo.get(row.task_id)) ?? row;
    await this.closeHold(next, null, ledgerStatus);
    return next;
  }

  /**
   * A task the gateway failed by its timeout that the provider now reports succeeded: it becomes
   * SUCCESS (the client can fetch the video), and what the provider billed is charged without a
   * hold (its hold was released at the timeout) and written to the ledger and the task's log.
   * Only the caller whose guarded move wins charges. Returns whether the task moved.
   */
  async lateSuccess(row: TaskRow, raw: Record<string, unknown>, view: ProviderTaskView, now = Date.now()): Promise<boolean> {
    const mapped = mapProviderTask(view, { allowPrivate: taskAllowsPrivateNetwork(this.d.config.channels, row) });
    if (row.status !== 'FAILURE' || mapped?.status !== 'SUCCESS') return false;
    const estimate = estimatedUnits(row);
    const used = view.usage ? { ...view.usage, resolution: view.usage.resolution ?? estimate.resolution } : estimate;
    const model = this.d.config.models[row.model];
    const q = model ? videoQuote(model, used, storedPriceContext(row)) : { micros: 0, billedBy: 'model no longer configured' };
    const patch: TaskPatch = {
      status: 'SUCCESS',
      progress: '100%',
      fail_reason: redact(mapped.failReason),
      data: JSON.stringify(redactDeep(raw)),
      finish_time: Math.floor(now / 1000),
      next_poll_at: 0,
      updated_at: now,
      ...(view.result?.kind === 'url' ? { url_expires_at: view.result.expiresAtS * 1000 } : {}),
    };
    const next = { ...row, ...patch } as TaskRow;
    const note = `late success: the provider finished the task after the gateway gave up; charged ${q.billedBy}`;
    if (!(await this.moveWithHooks(row, 'FAILURE', patch, next, now, note))) return false;
    const charged = await this.d.credit.chargeWithoutHold(row.key_id, q.micros);
    this.d.ledger.record({
      key_id: row.key_id,
      model: row.model,
      channel: row.channel,
      endpoint: 'video.settle',
      status: 200,
      input_units: 0,
      output_units: used.units,
      cost_micros: charged.chargedMicros,
      overage_micros: charged.overageMicros,
      latency_ms: Math.max(0, now - row.submit_time * 1000),
      billed_by: `late success: ${q.billedBy}`,
    });
    this.d.log('warn', 'video task: the provider reported success after the gateway gave up; delivered and charged', { task_id: row.task_id, billed_by: q.billedBy });
    return true;
  }

  /**
   * Settles a SUCCESS from the units the provider reported (the estimate when none were reported)
   * or releases a FAILURE's hold. The ledger row is written by whoever really closed the hold.
   */
  async closeHold(row: TaskRow, reported: BillableUnits | null, failureStatus = 502): Promise<void> {
    const hold = { reservationId: row.reservation_id, keyId: row.key_id, trace: taskTrace(row) };
    const base = { key_id: row.key_id, model: row.model, channel: row.channel, endpoint: TASK_SETTLE_ENDPOINT, input_units: 0, latency_ms: Math.max(0, Date.now() - row.submit_time * 1000) };
    if (row.status === 'SUCCESS') {
      // What the provider reported wins; what it left out (a resolution Kling does not echo) is the request's.
      const estimate = estimatedUnits(row);
      const used = reported ? { ...reported, resolution: reported.resolution ?? estimate.resolution } : estimate;
      // The model as configured, served by an enabled channel or not (one disabled since the create).
      const model = this.d.config.models[row.model];
      if (!model) this.d.log('warn', 'video task: model no longer configured; settling at no cost', { task_id: row.task_id, model: row.model });
      const q = model ? videoQuote(model, used, storedPriceContext(row)) : { micros: 0, billedBy: 'model no longer configured' };
      const settled = await this.d.credit.settle(hold, q.micros);
      if (settled) this.d.ledger.record({ ...base, status: 200, output_units: used.units, cost_micros: settled.chargedMicros, overage_micros: settled.overageMicros, billed_by: q.billedBy });
    } else if (row.status === 'FAILURE') {
      if (await this.d.credit.release(hold)) this.d.ledger.record({ ...base, status: failureStatus, output_units: 0, cost_micros: 0, error: row.fail_reason });
    }
  }
}

type Billing = Partial<BillableUnits> & { price?: PriceContext };

function billingOf(row: TaskRow): Billing {
  try {
    return row.billing ? (JSON.parse(row.billing) as Billing) : {};
  } catch {
    return {};
  }
}

/** The units reserved at create, in the unit they were estimated in (tokens for tasks stored before units). */
export function estimatedUnits(row: TaskRow): BillableUnits {
  const basis = billingOf(row);
  return { unit: basis.unit ?? 'tokens', units: Number(row.estimated_units), resolution: basis.resolution };
}

/** The create request's values the price factors look at (none for tasks stored before factors). */
function storedPriceContext(row: TaskRow): PriceContext {
  const p = billingOf(row).price;
  return p && typeof p === 'object' ? p : {};
}

/** The values of a create request the price factors may name; the settle reads them back from the task row. */
export function videoPriceContext(req: VideoGenerationRequest, estimate: BillableUnits): PriceContext {
  const duration = req.params.duration ?? (estimate.unit === 'seconds' ? estimate.units : undefined);
  return { resolution: req.params.resolution ?? estimate.resolution, duration, audio: req.params.generate_audio === true, mode: req.mode };
}

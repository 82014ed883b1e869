import type { Principal } from '../auth/principal.js';
import type { Config } from '../config/schema.js';
import { GatewayError, errors } from '../http/errors.js';
import { redact } from '../http/redact.js';
import type { TaskRow, TasksRepo } from '../store/repos/tasks.js';
import { UpstreamFailure } from '../upstream/failure.js';
import type { UpstreamClient } from '../upstream/client.js';
import { bindTask, type VideoBinding } from './binding.js';
import { toTaskRecord, type TaskRecord } from './record.js';
import { ownedTask } from './request.js';
import { isTerminal } from './status.js';
import type { TaskTransitions } from './transitions.js';

export interface CancelDeps {
  config: Pick<Config, 'channels'>;
  repo: TasksRepo;
  transitions: TaskTransitions;
  upstream: UpstreamClient;
}

/** The ledger status of a cancelled task's settle row (the client ended it; nginx's "client closed request"). */
const CANCELLED_LEDGER_STATUS = 499;
const REASON = 'cancelled: The task was cancelled by its owner.';

function notCancellable(message: string): GatewayError {
  return new GatewayError(409, 'task_not_cancellable', message);
}

/**
 * POST /v1/video/generations/{task_id}/cancel. The provider is asked first (only an adapter with
 * `cancel` can, and only for a state it accepts: Ark cancels queued tasks); once it accepted, the
 * task moves to FAILURE through the same guarded move the poller uses, so the credit hold is
 * released exactly once even when a poller moves the task at the same moment. A refusal of a task
 * the provider already holds as cancelled (another cancel got there first) ends the same way.
 * Anything else is 409 task_not_cancellable and nothing changes.
 */
export class TaskCanceller {
  constructor(private readonly d: CancelDeps) {}

  async cancel(p: Principal, taskId: string): Promise<TaskRecord> {
    return toTaskRecord(await this.cancelTask(await ownedTask(this.d.repo, p, taskId)));
  }

  /** Cancels an open task the caller owns (checked by the caller); the task as it ended. */
  async cancelTask(row: TaskRow): Promise<TaskRow> {
    if (isTerminal(row.status)) throw notCancellable(`The task has already ended (${row.status}).`);
    const bound = bindTask(this.d.config.channels, row);
    if (!bound?.adapter.cancel) throw notCancellable('The provider of this task cannot cancel tasks.');
    let outcome;
    try {
      outcome = await bound.adapter.cancel({ upstream: this.d.upstream }, bound.target, row.upstream_id);
    } catch (err) {
      if (err instanceof UpstreamFailure) throw errors.upstreamError(`The provider did not answer the cancellation: ${redact(err.message)}`);
      throw err;
    }
    // A refusal can mean that another cancel of this task (a DELETE, a second POST, on this or
    // another instance) got to the provider first and is being recorded right now: then the task
    // is cancelled, and this request records it too (the guarded move keeps it to one release).
    if (!outcome.accepted && !(await this.cancelledAtProvider(bound, row))) {
      throw notCancellable(`The provider cannot cancel the task in its current state${outcome.message ? `: ${redact(outcome.message)}` : '.'}`);
    }
    return this.settleCancelled(row);
  }

  /** Whether the provider holds the task as cancelled; false when it cannot tell right now. */
  private async cancelledAtProvider(bound: VideoBinding, row: TaskRow): Promise<boolean> {
    try {
      return bound.adapter.view(await bound.adapter.get({ upstream: this.d.upstream }, bound.target, row.upstream_id)).state === 'cancelled';
    } catch (err) {
      if (err instanceof UpstreamFailure) return false;
      throw err;
    }
  }

  /** Moves the task to FAILURE from whatever open status it is in now; a move another writer made first is followed. */
  private async settleCancelled(row: TaskRow): Promise<TaskRow> {
    let current = row;
    for (let i = 0; i < 4 && !isTerminal(current.status); i++) current = await this.d.transitions.fail(current, REASON, Date.now(), CANCELLED_LEDGER_STATUS);
    return current;
  }
}

import type { Principal } from '../auth/principal.js';
import { GatewayError, errors } from '../http/errors.js';
import { redact } from '../http/redact.js';
import type { ArchivesRepo } from '../store/repos/archives.js';
import type { TasksRepo } from '../store/repos/tasks.js';
import { objectKeyOf } from './archive/archiver.js';
import type { ObjectStorage } from '../storage/storage.js';
import type { TaskCanceller } from './cancel.js';
import type { TaskLog } from './log.js';
import { ownedTask } from './request.js';
import { isTerminal } from './status.js';

export interface VideoDeleteDeps {
  repo: TasksRepo;
  canceller: TaskCanceller;
  archives: ArchivesRepo;
  storage: ObjectStorage | null;
  log: TaskLog;
}

/**
 * DELETE /v1/videos/{id}: an open task is cancelled first where its provider can (the credit hold is
 * released as by POST …/cancel); one it cannot cancel is a 409 and stays as it is. Then the archived
 * copy is removed and the task hidden from both APIs (the row stays, for the ledger and operators).
 */
export class VideoDeleter {
  constructor(private readonly d: VideoDeleteDeps) {}

  async delete(p: Principal, taskId: string): Promise<void> {
    let row = await ownedTask(this.d.repo, p, taskId);
    if (!isTerminal(row.status)) {
      try {
        row = await this.d.canceller.cancelTask(row);
      } catch (err) {
        if (err instanceof GatewayError && err.status === 409) {
          throw new GatewayError(409, 'video_not_deletable', `The video is still being generated and cannot be deleted yet: ${err.message} Delete it once it has finished.`);
        }
        throw err;
      }
    }
    if (this.d.storage) {
      // Forgotten first, so a copy being made right now is removed by the archiver when it ends.
      await this.d.archives.forget(row.task_id);
      try {
        await this.d.storage.remove(objectKeyOf(row.task_id));
      } catch (err) {
        this.d.log('warn', 'video delete: removing the stored copy failed', { task_id: row.task_id, error: redact((err as Error).message) });
        throw new GatewayError(503, 'storage_unavailable', "The gateway could not remove the video's stored copy right now; retry the delete.", { 'retry-after': '1' });
      }
    }
    // A concurrent delete of the same task may have won: the video is gone either way.
    if (!(await this.d.repo.markDeleted(row.task_id, Date.now()))) {
      const now = await this.d.repo.get(row.task_id);
      if (!now?.deleted_at) throw errors.upstreamError('The video could not be deleted; retry.');
    }
  }
}

import { randomBase62 } from '../../ids.js';
import type { StorageConfig } from '../../config/schema.js';
import type { ArchiveRow, ArchivesRepo } from '../../store/repos/archives.js';
import { newArchiveJob } from '../../store/repos/archives.js';
import type { TasksRepo, TaskRow } from '../../store/repos/tasks.js';
import { redact } from '../../http/redact.js';
import type { ProviderVideoSource } from '../content/provider-source.js';
import type { TaskLog } from '../log.js';
import type { MoveHooks } from '../move-hooks.js';
import { ClaimWorker } from '../claim-worker.js';
import type { ObjectStorage } from '../../storage/storage.js';

export interface ArchiverDeps {
  repo: ArchivesRepo;
  tasks: TasksRepo;
  storage: ObjectStorage;
  source: ProviderVideoSource;
  settings: StorageConfig;
  log: TaskLog;
  /** Told of each attempt's outcome and the bytes a finished copy stored (metrics). */
  onAttempt?(outcome: 'ok' | 'retry' | 'failed', bytes: number): void;
}

/** How often retention looks for expired copies. */
const RETENTION_EVERY_MS = 10 * 60_000;

export function objectKeyOf(taskId: string): string {
  return `${taskId}.mp4`;
}

/**
 * Copies finished videos into storage in the background. A SUCCESS adds a job in the same
 * transaction as the move (see `hooks`); each instance claims due jobs with a lease, streams the
 * provider's video into storage (never whole in memory), and on failure tries again after the
 * next of `retry_delays_s`, giving up after the last. Retention deletes copies older than
 * `retain_days`.
 */
export class Archiver extends ClaimWorker<ArchiveRow> {
  readonly owner = `archiver-${randomBase62(12)}`;
  private lastRetention = 0;

  constructor(private readonly d: ArchiverDeps) {
    super('video archive', d.settings, d.log);
  }

  /** Adds the copy job with the move into SUCCESS; wakes the worker once the move is written. */
  hooks(): MoveHooks {
    return {
      extrasFor: async (_before, after, now) => (after.status === 'SUCCESS' ? { archive: newArchiveJob(after.task_id, objectKeyOf(after.task_id), now) } : undefined),
      moved: (_before, after) => {
        if (after.status === 'SUCCESS') this.wake();
      },
    };
  }

  protected claim(now: number, room: number): Promise<ArchiveRow[]> {
    return this.d.repo.claimDue(this.owner, now, now + this.d.settings.lease_ms, room);
  }

  protected idOf(job: ArchiveRow): string {
    return job.task_id;
  }

  protected work(job: ArchiveRow): Promise<void> {
    return this.copy(job);
  }

  protected release(): Promise<void> {
    return this.d.repo.releaseLeases(this.owner);
  }

  protected override async beforeClaim(now: number): Promise<void> {
    const retainMs = this.d.settings.retain_days * 86_400_000;
    if (retainMs > 0 && now - this.lastRetention >= Math.min(RETENTION_EVERY_MS, retainMs / 4)) {
      this.lastRetention = now;
      await this.applyRetention(now);
    }
  }

  /** One attempt at copying one task's video. */
  async copy(job: ArchiveRow): Promise<void> {
    const row = await this.d.tasks.get(job.task_id);
    if (!row || row.status !== 'SUCCESS') return this.failed(job, 'the task is not a SUCCESS', true);
    let stored: { bytes: number; contentType: string };
    try {
      stored = await this.store(row, job.object_key);
    } catch (err) {
      // Stopped mid-copy: not the copy's fault; stop() hands the lease back for the next instance.
      if (this.signal.aborted) return;
      return this.failed(job, redact((err as Error).message), false);
    }
    if (await this.d.repo.markStored(job.task_id, this.owner, stored.bytes, stored.contentType, Date.now())) {
      this.d.onAttempt?.('ok', stored.bytes);
      this.d.log('info', 'video archived', { task_id: job.task_id, bytes: stored.bytes, attempts: job.attempts + 1 });
    } else if ((await this.d.repo.get(job.task_id))?.state === 'deleted') {
      // The task was deleted while its copy was being made: the copy goes too.
      await this.d.storage.remove(job.object_key);
    }
  }

  private async store(row: TaskRow, key: string): Promise<{ bytes: number; contentType: string }> {
    const video = await this.d.source.open(row, undefined, this.signal);
    if (!video) throw new Error('the provider no longer serves the video');
    if (video.status !== 200) {
      video.body.destroy();
      throw new Error(`the provider answered HTTP ${video.status}`);
    }
    const contentType = video.contentType.startsWith('video/') ? video.contentType : 'video/mp4';
    const bytes = await this.d.storage.put(key, video.body, contentType);
    const declared = Number(video.contentLength);
    if (Number.isFinite(declared) && declared !== bytes) throw new Error(`the copy has ${bytes} bytes, the provider declared ${declared}`);
    return { bytes, contentType };
  }

  private async failed(job: ArchiveRow, error: string, final: boolean): Promise<void> {
    const attempts = job.attempts + 1;
    const delays = this.d.settings.retry_delays_s;
    const next = final || attempts > delays.length ? null : Date.now() + delays[attempts - 1] * 1000;
    await this.d.repo.markAttemptFailed(job.task_id, this.owner, attempts, next, error);
    this.d.onAttempt?.(next === null ? 'failed' : 'retry', 0);
    this.d.log(next === null ? 'error' : 'warn', next === null ? 'video archive: gave up' : 'video archive: copy failed; will retry', { task_id: job.task_id, attempts, error });
  }

  private async applyRetention(now: number): Promise<void> {
    const before = now - this.d.settings.retain_days * 86_400_000;
    for (;;) {
      const rows = await this.d.repo.storedBefore(before, 100);
      for (const r of rows) {
        try {
          await this.d.storage.remove(r.object_key);
          await this.d.repo.markDeleted(r.task_id);
        } catch (err) {
          this.d.log('warn', 'video archive: deleting an expired copy failed', { task_id: r.task_id, error: redact((err as Error).message) });
          return;
        }
      }
      if (rows.length < 100) return;
    }
  }
}

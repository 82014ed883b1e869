import { Readable } from 'node:stream';
import type { Principal } from '../../auth/principal.js';
import { GatewayError, errors } from '../../http/errors.js';
import { redact } from '../../http/redact.js';
import type { ArchivesRepo } from '../../store/repos/archives.js';
import type { TaskRow, TasksRepo } from '../../store/repos/tasks.js';
import type { ObjectStorage } from '../../storage/storage.js';
import type { TaskLog } from '../log.js';
import { ownedTask } from '../request.js';
import { VideoFetchError, type ProviderVideoSource, type VideoStream } from './provider-source.js';
import { parseRange } from '../../http/byte-range.js';

export interface VideoContentDeps {
  tasks: TasksRepo;
  archives: ArchivesRepo;
  storage: ObjectStorage | null;
  source: ProviderVideoSource;
  log: TaskLog;
}

/**
 * GET /v1/video/generations/{task_id}/content: the finished video of the caller's own task,
 * streamed with Range support — from the archive when a copy is stored, else from the provider.
 */
export class VideoContent {
  constructor(private readonly d: VideoContentDeps) {}

  async open(p: Principal, taskId: string, range: string | undefined, signal?: AbortSignal): Promise<VideoStream> {
    const row = await ownedTask(this.d.tasks, p, taskId);
    if (row.status !== 'SUCCESS') throw new GatewayError(404, 'video_not_ready', `The task has no video: its status is ${row.status}.`);
    return this.openFinished(row, range, signal);
  }

  /**
   * The video of a finished (SUCCESS) task whoever asks: the owner through open(), an operator
   * through the admin API (GET /admin/api/tasks/{id}/content), which checks its own access first.
   */
  async openFinished(row: TaskRow, range: string | undefined, signal?: AbortSignal): Promise<VideoStream> {
    const taskId = row.task_id;
    const fromArchive = await this.fromArchive(taskId, range);
    if (fromArchive) return fromArchive;
    let video: VideoStream | null;
    try {
      video = await this.d.source.open(row, range, signal);
    } catch (err) {
      if (err instanceof VideoFetchError) throw errors.upstreamError(redact(err.message));
      throw err;
    }
    if (!video) throw new GatewayError(404, 'video_unavailable', 'The provider no longer serves this video and the gateway holds no copy of it.');
    return video;
  }

  private async fromArchive(taskId: string, rangeHeader: string | undefined): Promise<VideoStream | null> {
    if (!this.d.storage) return null;
    const copy = await this.d.archives.get(taskId);
    if (!copy || copy.state !== 'stored') return null;
    const size = copy.bytes;
    const range = parseRange(rangeHeader, size);
    if (range === 'unsatisfiable') {
      return { status: 416, contentType: copy.content_type, contentLength: '0', contentRange: `bytes */${size}`, body: Readable.from([]) };
    }
    try {
      const body = await this.d.storage.read(copy.object_key, range ?? undefined);
      if (!range) return { status: 200, contentType: copy.content_type, contentLength: String(size), contentRange: undefined, body };
      return { status: 206, contentType: copy.content_type, contentLength: String(range.end - range.start + 1), contentRange: `bytes ${range.start}-${range.end}/${size}`, body };
    } catch (err) {
      // A copy removed behind the gateway's back: the provider may still have the video.
      this.d.log('warn', 'video archive: stored copy unreadable; trying the provider', { task_id: taskId, error: redact((err as Error).message) });
      return null;
    }
  }
}

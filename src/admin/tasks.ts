import type { Config } from '../config/schema.js';
import type { TasksRepo } from '../store/repos/tasks.js';
import type { TaskEventsRepo } from '../store/repos/task-events.js';
import type { TaskReportsRepo } from '../store/repos/task-reports.js';
import type { VideoContent } from '../tasks/content/video-content.js';
import type { VideoStream } from '../tasks/content/provider-source.js';
import { toTaskRecord, type TaskRecord } from '../tasks/record.js';
import { parseMeta } from '../tasks/openai-videos.js';
import { progressOf } from '../tasks/status.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import { adminErrors } from './errors.js';
import { usd } from './money.js';
import { int, str, time, type Query } from './query.js';

// Video tasks for operators: every key's tasks, with what the client never sees (key, channel,
// upstream id, cost, timeline).

const STATUSES = ['SUBMITTED', 'QUEUED', 'IN_PROGRESS', 'SUCCESS', 'FAILURE'];

export interface TaskDetail {
  task: TaskRecord;
  key_id: string;
  model: string;
  channel: string;
  provider: string | null;
  upstream_model: string;
  upstream_id: string;
  /** What the client asked for: duration in seconds and size (as the video object shows them), and the resolution it was billed at. */
  requested: { seconds: string | null; size: string | null; resolution: string | null };
  cost: { held_usd: string; charged_usd: string; state: string } | null;
  timeline: { at: string; from: string | null; to: string; detail: string }[];
}

export interface TaskAdminDeps {
  config: Config;
  repo: TasksRepo;
  events: TaskEventsRepo;
  reports: TaskReportsRepo;
  content: VideoContent;
}

function requestedOf(videoMeta: string, billing: string): TaskDetail['requested'] {
  const meta = parseMeta(videoMeta);
  let resolution: unknown = null;
  try {
    resolution = (JSON.parse(billing) as { resolution?: unknown }).resolution ?? null;
  } catch {
    // tasks from before billing was recorded
  }
  const text = (v: unknown) => (typeof v === 'string' && v ? v : typeof v === 'number' ? String(v) : null);
  return { seconds: text(meta.seconds), size: text(meta.size), resolution: text(resolution) };
}

export class TaskAdmin {
  constructor(private readonly d: TaskAdminDeps) {}

  /** Filters: id (the start of a task id), status, model, key, provider (a channel type), from/to (submit time); newest first. */
  async list(q: Query) {
    const status = str(q, 'status', 20);
    if (status !== undefined && !STATUSES.includes(status)) throw adminErrors.invalid(`status must be one of ${STATUSES.join(', ')}`);
    const provider = str(q, 'provider', 40);
    const from = time(q, 'from');
    const to = time(q, 'to');
    const limit = int(q, 'limit', 1, 500, 50);
    const cursor = str(q, 'cursor', 512);
    const c = decodeCursor(cursor, ['number', 'string']);
    const after = c && { submitTime: c[0], taskId: c[1] };
    const rows = await this.d.reports.page(
      {
        idPrefix: str(q, 'id', 200),
        status,
        model: str(q, 'model'),
        keyId: str(q, 'key'),
        channels: provider === undefined ? undefined : this.d.config.channels.filter((c) => c.type === provider).map((c) => c.name),
        fromS: from === undefined ? undefined : Math.floor(from / 1000),
        toS: to === undefined ? undefined : Math.ceil(to / 1000),
      },
      limit + 1,
      after,
    );
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    const nowS = Math.floor(Date.now() / 1000);
    return {
      // fail_reason holds the video's URL on a SUCCESS (the task record's convention): the list shows only why a task failed.
      data: page.map((r) => ({ ...r, fail_reason: r.status === 'FAILURE' ? r.fail_reason : '', progress: progressOf(r.status, r.start_time, nowS), provider: this.providerOf(r.channel) })),
      next_cursor: rows.length > limit && last ? encodeCursor(last.submit_time, last.task_id) : null,
    };
  }

  private providerOf(channel: string): string | null {
    return this.d.config.channels.find((c) => c.name === channel)?.type ?? null;
  }

  async detail(taskId: string): Promise<TaskDetail> {
    const row = await this.d.repo.get(taskId);
    if (!row) throw adminErrors.notFound(`The task ${JSON.stringify(taskId)}`);
    const [events, hold] = await Promise.all([this.d.events.of(taskId), this.d.reports.reservation(row.reservation_id)]);
    return {
      task: toTaskRecord(row),
      key_id: row.key_id,
      model: row.model,
      channel: row.channel,
      provider: this.providerOf(row.channel),
      upstream_model: row.upstream_model,
      upstream_id: (row as { upstream_id?: string | null }).upstream_id || row.task_id,
      requested: requestedOf(row.video_meta, row.billing),
      cost: hold ? { held_usd: usd(hold.state === 'held' ? hold.amount_micros : 0), charged_usd: usd(hold.charged_micros), state: hold.state } : null,
      timeline: events.map((e) => ({ at: new Date(e.at).toISOString(), from: e.from_status || null, to: e.to_status, detail: e.detail })),
    };
  }

  /**
   * The finished task's video, streamed as its owner gets it from /content (the same source: the
   * archived copy, else the provider's signed URL — refreshed when expired — or, for results only
   * the channel's key can fetch, the adapter's download; Range passed through).
   */
  async video(taskId: string, range: string | undefined, signal?: AbortSignal): Promise<VideoStream> {
    const row = await this.d.repo.get(taskId);
    if (!row) throw adminErrors.notFound(`The task ${JSON.stringify(taskId)}`);
    if (row.status !== 'SUCCESS') throw adminErrors.conflict(`The task ${taskId} has no video: it is ${row.status}.`);
    return this.d.content.openFinished(row, range, signal);
  }
}

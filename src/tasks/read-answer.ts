import type { Config } from '../config/schema.js';
import type { TaskView } from '../store/repos/tasks.js';
import { presentRecord } from './content/gateway-url.js';
import { envelope, toTaskRecord, type TaskEnvelope } from './record.js';
import { progressOf } from './status.js';

// The bytes of GET /v1/video/generations/{id}, built once per version of a task and reused while
// the task reads the same. Clients poll a task many times between two changes (and a finished task
// never changes but for a refreshed URL), so most reads would otherwise parse the stored provider
// object and serialize the same answer again.
//
// Nothing here is trusted without the database: every read still reads the row (the latest
// committed version, whichever instance wrote it), and a kept answer is reused only when each
// input of the answer is equal to what it was built from — the row's shown columns (the stored
// provider object compared as a string), the live progress of a running task, the base of the
// gateway's own URLs and `storage.public_url_mode`. So no write, on this instance or another, needs
// to invalidate anything: a changed row simply does not match. Only the answer is kept, never a
// decision (ownership, deletion and URL refresh are decided from the row on every read).

/** The row's shown columns the answer was built from, and what else went into it. */
type Kept = Pick<TaskView, 'action' | 'status' | 'fail_reason' | 'submit_time' | 'start_time' | 'finish_time' | 'progress' | 'data' | 'upstream_id'> & {
  base: string;
  mode: string;
  bytes: string;
};

/** At most this many tasks' answers, and about this many characters in all (answer + provider object). */
const MAX_TASKS = 4096;
const MAX_CHARS = 16 * 1024 * 1024;

export class TaskAnswers {
  private readonly kept = new Map<string, Kept>();
  private chars = 0;

  constructor(
    private readonly config: Pick<Config, 'storage'>,
    private readonly limits: { tasks: number; chars: number } = { tasks: MAX_TASKS, chars: MAX_CHARS },
  ) {}

  /**
   * The JSON answer ({"code":"success","message":"","data":TaskRecord}) for `view` read at `now`;
   * `serialize` makes the bytes when nothing kept matches (the route's own response serializer, so
   * a kept answer is byte for byte what the route would send).
   */
  json(view: TaskView, base: string, serialize: (answer: TaskEnvelope) => string = JSON.stringify, now = Date.now()): string {
    const progress = progressOf(view.status, view.start_time, Math.floor(now / 1000), view.progress);
    const mode = this.config.storage.public_url_mode;
    const k = this.kept.get(view.task_id);
    if (
      k &&
      k.status === view.status &&
      k.progress === progress &&
      k.fail_reason === view.fail_reason &&
      k.finish_time === view.finish_time &&
      k.start_time === view.start_time &&
      k.submit_time === view.submit_time &&
      k.action === view.action &&
      k.upstream_id === view.upstream_id &&
      k.base === base &&
      k.mode === mode &&
      k.data === view.data
    ) {
      return k.bytes;
    }
    const bytes = serialize(envelope(presentRecord(this.config, toTaskRecord(view, now), base)));
    this.keep(view.task_id, {
      action: view.action,
      status: view.status,
      fail_reason: view.fail_reason,
      submit_time: view.submit_time,
      start_time: view.start_time,
      finish_time: view.finish_time,
      progress,
      data: view.data,
      upstream_id: view.upstream_id,
      base,
      mode,
      bytes,
    });
    return bytes;
  }

  /** How many tasks' answers are kept (tests, metrics). */
  get size(): number {
    return this.kept.size;
  }

  private keep(taskId: string, k: Kept): void {
    const size = (x: Kept) => x.bytes.length + x.data.length;
    const old = this.kept.get(taskId);
    if (old) {
      this.chars -= size(old);
      this.kept.delete(taskId);
    }
    // A task too large to keep is answered, just not kept.
    if (size(k) > this.limits.chars / 16) return;
    this.kept.set(taskId, k);
    this.chars += size(k);
    // The oldest kept first (insertion order).
    for (const [id, x] of this.kept) {
      if (this.kept.size <= this.limits.tasks && this.chars <= this.limits.chars) break;
      this.kept.delete(id);
      this.chars -= size(x);
    }
  }
}

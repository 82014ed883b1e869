import { sql, type Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { prepared } from '../prepared.js';
import { normalizeTask, type TaskRow } from './tasks.js';

export interface TaskListFilter {
  keyId: string;
  status?: string;
  model?: string;
  /** Rows strictly past this (submit_time, task_id) position in the page order: the cursor of the previous page. */
  after?: { submitTime: number; taskId: string };
  limit: number;
  /** Newest first (default) or oldest first. */
  order?: 'asc' | 'desc';
}

/** The columns of a TaskRecord (GET /v1/video/generations). */
export const RECORD_LIST_COLUMNS = ['task_id', 'action', 'status', 'fail_reason', 'submit_time', 'start_time', 'finish_time', 'progress', 'data', 'upstream_id'] as const;
/** The columns of a video object (GET /v1/videos): no provider object. */
export const VIDEO_LIST_COLUMNS = ['task_id', 'model', 'status', 'fail_reason', 'submit_time', 'start_time', 'finish_time', 'progress', 'video_meta'] as const;

export type RecordListRow = Pick<TaskRow, (typeof RECORD_LIST_COLUMNS)[number]>;
export type VideoListRow = Pick<TaskRow, (typeof VIDEO_LIST_COLUMNS)[number]>;

type Columns = typeof RECORD_LIST_COLUMNS | typeof VIDEO_LIST_COLUMNS;
type Page<R> = (...params: unknown[]) => Promise<R[]>;

/**
 * A key's tasks newest first, by keyset pagination on (submit_time, task_id): the cursor is the
 * last row's position, so page n costs what page 1 costs (no OFFSET), and tasks created while a
 * client pages never shift or repeat rows it already saw. Served by the tasks_key_* indexes
 * (docs/video.md, "Listing tasks": the plans on both stores).
 *
 * Each shape of page (which filters, a cursor or not, the order, which columns) is one SQL text
 * compiled once; a page reads only the columns its answer shows (building a row object costs per
 * column, and the provider object is most of a row's bytes).
 */
export class TaskListRepo {
  private readonly compiled = new Map<string, Page<unknown>>();

  constructor(private readonly db: Kysely<Database>) {}

  /** A page of TaskRecord columns. */
  async page(f: TaskListFilter): Promise<RecordListRow[]> {
    return this.run<RecordListRow>(RECORD_LIST_COLUMNS, f);
  }

  /** A page of video object columns. */
  async videoPage(f: TaskListFilter): Promise<VideoListRow[]> {
    return this.run<VideoListRow>(VIDEO_LIST_COLUMNS, f);
  }

  private async run<R>(columns: Columns, f: TaskListFilter): Promise<R[]> {
    const order = f.order ?? 'desc';
    const shape = `${columns === RECORD_LIST_COLUMNS ? 'r' : 'v'}${f.status !== undefined ? 's' : ''}${f.model !== undefined ? 'm' : ''}${f.after ? 'a' : ''}${order}`;
    let page = this.compiled.get(shape) as Page<R> | undefined;
    if (!page) {
      page = this.compile<R>(columns, f.status !== undefined, f.model !== undefined, !!f.after, order);
      this.compiled.set(shape, page as Page<unknown>);
    }
    // In the order the query uses them (see compile).
    const params: unknown[] = [f.keyId, 0];
    if (f.status !== undefined) params.push(f.status);
    if (f.model !== undefined) params.push(f.model);
    if (f.after) params.push(f.after.submitTime, f.after.taskId);
    params.push(f.limit);
    const rows = await page(...params);
    return rows.map((r) => normalizeTask(r as Partial<TaskRow>) as R);
  }

  private compile<R>(columns: Columns, byStatus: boolean, byModel: boolean, after: boolean, order: 'asc' | 'desc'): Page<R> {
    const db = this.db;
    const build = (...p: unknown[]) => {
      let i = 0;
      const next = () => p[i++];
      // Deleted tasks are hidden from their owner (DELETE /v1/videos/{id}).
      let q = db
        .selectFrom('tasks')
        .select([...columns])
        .where('key_id', '=', next() as string)
        .where('deleted_at', '=', next() as number);
      if (byStatus) q = q.where('status', '=', next() as string);
      if (byModel) q = q.where('model', '=', next() as string);
      if (after) {
        const [s, t] = [next(), next()];
        q = order === 'desc' ? q.where(sql<boolean>`(submit_time, task_id) < (${s}, ${t})`) : q.where(sql<boolean>`(submit_time, task_id) > (${s}, ${t})`);
      }
      return q
        .orderBy('submit_time', order)
        .orderBy('task_id', order)
        .limit(next() as number);
    };
    const sample: unknown[] = ['', 0];
    if (byStatus) sample.push('');
    if (byModel) sample.push('');
    if (after) sample.push(0, '');
    sample.push(1);
    return prepared(db, build, sample) as unknown as Page<R>;
  }
}

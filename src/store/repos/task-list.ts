import { sql, type Kysely } from 'kysely';
import type { Database } from '../schema.js';
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

/**
 * A key's tasks newest first, by keyset pagination on (submit_time, task_id): the cursor is the
 * last row's position, so page n costs what page 1 costs (no OFFSET), and tasks created while a
 * client pages never shift or repeat rows it already saw. Served by the tasks_key_* indexes.
 */
export class TaskListRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async page(f: TaskListFilter): Promise<TaskRow[]> {
    // Deleted tasks are hidden from their owner (DELETE /v1/videos/{id}).
    let q = this.db.selectFrom('tasks').selectAll().where('key_id', '=', f.keyId).where('deleted_at', '=', 0);
    if (f.status) q = q.where('status', '=', f.status);
    if (f.model) q = q.where('model', '=', f.model);
    const order = f.order ?? 'desc';
    if (f.after) {
      q = order === 'desc'
        ? q.where(sql<boolean>`(submit_time, task_id) < (${f.after.submitTime}, ${f.after.taskId})`)
        : q.where(sql<boolean>`(submit_time, task_id) > (${f.after.submitTime}, ${f.after.taskId})`);
    }
    const rows = await q.orderBy('submit_time', order).orderBy('task_id', order).limit(f.limit).execute();
    return rows.map(normalizeTask);
  }
}

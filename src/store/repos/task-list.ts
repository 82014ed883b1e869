import { sql, type Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { normalizeTask, type TaskRow } from './tasks.js';

export interface TaskListFilter {
  keyId: string;
  status?: string;
  model?: string;
  /** Rows strictly older than this (submit_time, task_id) position: the cursor of the previous page. */
  after?: { submitTime: number; taskId: string };
  limit: number;
}

/**
 * A key's tasks newest first, by keyset pagination on (submit_time, task_id): the cursor is the
 * last row's position, so page n costs what page 1 costs (no OFFSET), and tasks created while a
 * client pages never shift or repeat rows it already saw. Served by the tasks_key_* indexes.
 */
export class TaskListRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async page(f: TaskListFilter): Promise<TaskRow[]> {
    let q = this.db.selectFrom('tasks').selectAll().where('key_id', '=', f.keyId);
    if (f.status) q = q.where('status', '=', f.status);
    if (f.model) q = q.where('model', '=', f.model);
    if (f.after) q = q.where(sql<boolean>`(submit_time, task_id) < (${f.after.submitTime}, ${f.after.taskId})`);
    const rows = await q.orderBy('submit_time', 'desc').orderBy('task_id', 'desc').limit(f.limit).execute();
    return rows.map(normalizeTask);
  }
}

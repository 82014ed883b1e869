import type { Kysely, Selectable } from 'kysely';
import type { Database, TaskCallbackTable } from '../schema.js';

export type TaskCallbackRow = Selectable<TaskCallbackTable>;

export async function insertTaskCallback(db: Kysely<Database>, row: TaskCallbackRow): Promise<void> {
  await db.insertInto('task_callbacks').values(row).execute();
}

/** Where a task's webhooks go (written with the task at create). */
export class TaskCallbacksRepo {
  constructor(private readonly db: Kysely<Database>) {}

  get(taskId: string): Promise<TaskCallbackRow | undefined> {
    return this.db.selectFrom('task_callbacks').selectAll().where('task_id', '=', taskId).executeTakeFirst();
  }
}

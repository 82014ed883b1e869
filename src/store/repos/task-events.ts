import type { Kysely, Selectable } from 'kysely';
import type { Database, TaskEventTable } from '../schema.js';

export type TaskEventRow = Selectable<TaskEventTable>;

/** A task's timeline: one row per status move (see TasksRepo.insert and TasksRepo.move). */
export class TaskEventsRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async of(taskId: string): Promise<TaskEventRow[]> {
    const rows = await this.db.selectFrom('task_events').selectAll().where('task_id', '=', taskId).orderBy('id').execute();
    return rows.map((r) => ({ ...r, id: Number(r.id), at: Number(r.at) }));
  }
}

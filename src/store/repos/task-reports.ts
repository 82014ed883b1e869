import { sql, type Kysely } from 'kysely';
import type { Database } from '../schema.js';
import type { TaskRow } from './tasks.js';
import { OPEN_STATUSES } from './tasks.js';

// Video tasks as operators browse them: filtered pages, newest first, keyset-paged on
// (submit_time, task_id) — indexed by tasks_submit — and the overview's open-task series.

export interface TaskFilter {
  /** The start of a task id. */
  idPrefix?: string;
  status?: string;
  model?: string;
  keyId?: string;
  /** Channels of the asked provider type. */
  channels?: string[];
  fromS?: number;
  toS?: number;
}

export interface TaskListRow {
  task_id: string;
  key_id: string;
  model: string;
  channel: string;
  action: string;
  status: string;
  fail_reason: string;
  submit_time: number;
  start_time: number;
  finish_time: number;
}

export class TaskReportsRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async page(f: TaskFilter, limit: number, after?: { submitTime: number; taskId: string }): Promise<TaskListRow[]> {
    let q = this.db
      .selectFrom('tasks')
      .select(['task_id', 'key_id', 'model', 'channel', 'action', 'status', 'fail_reason', 'submit_time', 'start_time', 'finish_time'])
      .orderBy('submit_time', 'desc')
      .orderBy('task_id', 'desc')
      .limit(limit);
    if (f.idPrefix) q = q.where(sql<boolean>`substr(task_id, 1, ${f.idPrefix.length}) = ${f.idPrefix}`);
    if (f.status) q = q.where('status', '=', f.status);
    if (f.model) q = q.where('model', '=', f.model);
    if (f.keyId) q = q.where('key_id', '=', f.keyId);
    if (f.channels) q = f.channels.length ? q.where('channel', 'in', f.channels) : q.where(sql<boolean>`1 = 0`);
    if (f.fromS !== undefined) q = q.where('submit_time', '>=', f.fromS);
    if (f.toS !== undefined) q = q.where('submit_time', '<', f.toS);
    if (after) q = q.where((eb) => eb.or([eb('submit_time', '<', after.submitTime), eb.and([eb('submit_time', '=', after.submitTime), eb('task_id', '<', after.taskId)])]));
    const rows = await q.execute();
    return rows.map((r) => ({ ...r, submit_time: Number(r.submit_time), start_time: Number(r.start_time), finish_time: Number(r.finish_time) }));
  }

  async reservation(id: string | null): Promise<{ amount_micros: number; charged_micros: number; state: string } | undefined> {
    if (!id) return undefined;
    const r = await this.db.selectFrom('reservations').select(['amount_micros', 'charged_micros', 'state']).where('id', '=', id).executeTakeFirst();
    return r ? { amount_micros: Number(r.amount_micros), charged_micros: Number(r.charged_micros), state: r.state } : undefined;
  }

  /** Tasks submitted and finished per bucket since `fromS`, and how many are open now: enough to draw open tasks over time. */
  async openSeries(fromS: number, bucketS: number): Promise<{ openNow: number; submitted: Map<number, number>; finished: Map<number, number> }> {
    const b = sql.lit(bucketS);
    const [open, sub, fin] = await Promise.all([
      this.db.selectFrom('tasks').select((eb) => eb.fn.countAll<number>().as('n')).where('status', 'in', [...OPEN_STATUSES]).executeTakeFirstOrThrow(),
      this.db
        .selectFrom('tasks')
        .select((eb) => [sql<number>`(submit_time / ${b}) * ${b}`.as('bucket'), eb.fn.countAll<number>().as('n')])
        .where('submit_time', '>=', fromS)
        .groupBy(sql`1`)
        .execute(),
      this.db
        .selectFrom('tasks')
        .select((eb) => [sql<number>`(finish_time / ${b}) * ${b}`.as('bucket'), eb.fn.countAll<number>().as('n')])
        .where('finish_time', '>=', fromS)
        .groupBy(sql`1`)
        .execute(),
    ]);
    const toMap = (rows: { bucket: number; n: number }[]) => new Map(rows.map((r) => [Number(r.bucket), Number(r.n)]));
    return { openNow: Number(open.n), submitted: toMap(sub), finished: toMap(fin) };
  }
}

export type { TaskRow };

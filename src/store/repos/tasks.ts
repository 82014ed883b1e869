import { sql, type ExpressionBuilder, type Kysely, type Selectable, type Updateable } from 'kysely';
import type { Database, TaskTable } from '../schema.js';
import type { Dialect, RawRead, Store } from '../db.js';
import { prepared } from '../prepared.js';
import { insertArchiveJob, type ArchiveRow } from './archives.js';
import { insertOutbox, type OutboxRow } from './webhook-outbox.js';
import { insertTaskCallback, type TaskCallbackRow } from './task-callbacks.js';

export type TaskRow = Selectable<TaskTable>;
/** A task as written at create: the columns with defaults (deletion, the Videos API's meta) may be left out. */
export type NewTaskRow = Omit<TaskRow, 'deleted_at' | 'video_meta' | 'trace_parent'> & Partial<Pick<TaskRow, 'deleted_at' | 'video_meta' | 'trace_parent'>>;
export type TaskPatch = Omit<Updateable<TaskTable>, 'task_id' | 'key_id'>;

/** Rows written in the same transaction as a status move. */
export interface MoveExtras {
  archive?: ArchiveRow;
  outbox?: OutboxRow[];
}

/** Gateway statuses in the only order they may take. */
export const OPEN_STATUSES = ['SUBMITTED', 'QUEUED', 'IN_PROGRESS'] as const;
export const TERMINAL_STATUSES = ['SUCCESS', 'FAILURE'] as const;

// Kysely returns bigint columns as strings on some drivers; every numeric column is made a number.
const NUMERIC: (keyof TaskRow)[] = ['submit_time', 'start_time', 'finish_time', 'estimated_units', 'next_poll_at', 'lease_until', 'poll_failures', 'deadline_at', 'url_expires_at', 'updated_at', 'deleted_at'];

/**
 * Makes a fresh driver row's numeric columns numbers, in place (no copy: a row object is built per
 * query, and copying its ~26 columns cost more than the read itself). The drivers as configured
 * already answer numbers (db.ts), so this usually changes nothing.
 */
export function normalizeTask<R extends Partial<TaskRow>>(row: R): R {
  const out = row as Record<string, unknown>;
  for (const k of NUMERIC) {
    const v = out[k];
    if (v !== undefined && typeof v !== 'number') out[k] = Number(v);
  }
  return row;
}

/** The columns a client's read of its task needs (ownership, the TaskRecord, the URL's expiry). */
export const VIEW_COLUMNS = ['task_id', 'key_id', 'action', 'status', 'fail_reason', 'submit_time', 'start_time', 'finish_time', 'progress', 'data', 'upstream_id', 'url_expires_at', 'deleted_at'] as const;
export type TaskView = Pick<TaskRow, (typeof VIEW_COLUMNS)[number]>;

const num = (v: unknown): number => (typeof v === 'number' ? v : Number(v));

/**
 * A row read as values in VIEW_COLUMNS order (the query-only connection's raw read), built as one
 * literal: every view then has the same shape (a row filled key by key in a loop went through the
 * megamorphic keyed-store path and made every later read of its fields a megamorphic lookup).
 */
function viewFromValues(v: unknown[]): TaskView {
  return {
    task_id: v[0] as string,
    key_id: v[1] as string,
    action: v[2] as string,
    status: v[3] as string,
    fail_reason: v[4] as string,
    submit_time: num(v[5]),
    start_time: num(v[6]),
    finish_time: num(v[7]),
    progress: v[8] as string,
    data: v[9] as string,
    upstream_id: v[10] as string,
    url_expires_at: num(v[11]),
    deleted_at: num(v[12]),
  } satisfies Record<(typeof VIEW_COLUMNS)[number], unknown>;
}

/**
 * All task SQL. Status moves are guarded (`WHERE task_id = ? AND status = <expected>`), so when two
 * pollers race exactly one move wins and only the winner settles or refunds. Due tasks are claimed
 * with a lease: another poller cannot take a leased task until the lease runs out.
 */
export class TasksRepo {
  // A whole task by id: compiled once.
  private readonly byId;
  // A client's task read (GET /v1/video/generations/{id}, every client's polling): only the
  // columns it shows, on SQLite through the store's query-only connection as an array of values.
  private readonly viewById;
  private readonly viewRaw: RawRead | null;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
    readRaw: Store['readRaw'] = null,
  ) {
    this.byId = prepared(db, (taskId: string) => db.selectFrom('tasks').selectAll().where('task_id', '=', taskId), ['']);
    this.viewById = prepared(db, (taskId: string) => db.selectFrom('tasks').select([...VIEW_COLUMNS]).where('task_id', '=', taskId), ['']);
    this.viewRaw = readRaw ? readRaw(`select ${VIEW_COLUMNS.join(', ')} from tasks where task_id = ?`) : null;
  }

  /** Stores a new task, with where its webhooks go (in one transaction) when it has a callback, and the first row of its timeline. */
  async insert(row: NewTaskRow, callback?: TaskCallbackRow): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx.insertInto('tasks').values(row).execute();
      if (callback) await insertTaskCallback(trx, callback);
      await recordMove(trx, row.task_id, '', row.status, row.updated_at || Date.now());
    });
  }

  async get(taskId: string): Promise<TaskRow | undefined> {
    const row = (await this.byId(taskId))[0];
    return row ? normalizeTask(row) : undefined;
  }

  /**
   * What a client's read of the task shows (VIEW_COLUMNS); the latest committed version. On SQLite
   * the row is read on the query-only connection, as an array of values (Store.readRaw).
   */
  async view(taskId: string): Promise<TaskView | undefined> {
    if (this.viewRaw) {
      const values = this.viewRaw(taskId);
      return values ? viewFromValues(values) : undefined;
    }
    const rows = await this.viewById(taskId);
    return rows[0] ? normalizeTask(rows[0]) : undefined;
  }

  /**
   * Moves a task from `from` to whatever `patch` says (possibly the same status with new data).
   * Returns false when the task was no longer in `from`: someone else moved it first.
   */
  async move(taskId: string, from: string, patch: TaskPatch, extras?: MoveExtras, note?: string): Promise<boolean> {
    const update = async (db: Kysely<Database>) => {
      const r = await db.updateTable('tasks').set(patch).where('task_id', '=', taskId).where('status', '=', from).executeTakeFirst();
      const moved = Number(r.numUpdatedRows) === 1;
      if (moved && patch.status !== undefined && patch.status !== from) {
        const detail = note !== undefined ? note.slice(0, 500) : patch.status === 'FAILURE' && typeof patch.fail_reason === 'string' ? patch.fail_reason.slice(0, 500) : '';
        await recordMove(db, taskId, from, String(patch.status), Number(patch.updated_at ?? Date.now()), detail);
      }
      return moved;
    };
    if (!extras || (!extras.archive && !extras.outbox?.length)) return update(this.db);
    // The work a move starts (an archive copy, webhook deliveries) is written with the move or not at all.
    return this.db.transaction().execute(async (trx) => {
      if (!(await update(trx))) return false;
      if (extras.archive) await insertArchiveJob(trx, extras.archive);
      for (const o of extras.outbox ?? []) await insertOutbox(trx, o);
      return true;
    });
  }

  /** Hides a finished task from its owner's APIs (DELETE /v1/videos/{id}); false when it was not a finished, undeleted task. */
  async markDeleted(taskId: string, now: number): Promise<boolean> {
    const r = await this.db
      .updateTable('tasks')
      .set({ deleted_at: now })
      .where('task_id', '=', taskId)
      .where('deleted_at', '=', 0)
      .where('status', 'in', [...TERMINAL_STATUSES])
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /**
   * Tasks the gateway gave up on (FAILURE by its own timeout) whose late read is due: the provider
   * may still finish them, and what it then bills is recorded.
   */
  async lateReadsDue(now: number, limit: number): Promise<TaskRow[]> {
    const rows = await this.db
      .selectFrom('tasks')
      .selectAll()
      .where('status', '=', 'FAILURE')
      .where('next_poll_at', '>', 0)
      .where('next_poll_at', '<=', now)
      // The gateway's own timeout (timeoutReason), not a provider failure whose code reads "timeout".
      .where('fail_reason', 'like', 'timeout: The task was still unfinished%')
      .orderBy('next_poll_at')
      .limit(limit)
      .execute();
    return rows.map(normalizeTask);
  }

  /** Claims a timed-out task's late read: its next one moves from `seen` to `next` (0: no more); false when another instance took it. */
  async deferLateRead(taskId: string, seen: number, next: number): Promise<boolean> {
    const r = await this.db.updateTable('tasks').set({ next_poll_at: next }).where('task_id', '=', taskId).where('status', '=', 'FAILURE').where('next_poll_at', '=', seen).executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /** Pushes an open task's next poll back after a failed poll. */
  async backOff(taskId: string, status: string, nextPollAt: number, pollFailures: number): Promise<void> {
    await this.db
      .updateTable('tasks')
      .set({ next_poll_at: nextPollAt, poll_failures: pollFailures })
      .where('task_id', '=', taskId)
      .where('status', '=', status)
      .execute();
  }

  /**
   * Claims up to `limit` due open tasks for `owner`: leases them until `leaseUntil` and sets their
   * next poll time, in one write. A task is claimable when it is due and its lease ran out or
   * already belongs to `owner` (so a poller keeps its tasks without a write after each poll).
   * `dueAt`, when given, is told each claimed task's due time before the claim moved it (by task
   * id; SQLite: read just before the claim, so a task that became due in between is missing).
   */
  async claimDue(owner: string, now: number, leaseUntil: number, nextPollAt: number, limit: number, nextPollWithCallback = nextPollAt, dueAt?: Map<string, number>): Promise<TaskRow[]> {
    // Tasks whose provider calls back (a callback_token) are next polled at their own, later time.
    const set = (eb: ExpressionBuilder<Database, 'tasks'>) => ({
      lease_owner: owner,
      lease_until: leaseUntil,
      next_poll_at:
        nextPollWithCallback === nextPollAt
          ? eb.val(nextPollAt)
          : eb.case().when('callback_token', 'is', null).then(eb.cast<number>(eb.val(nextPollAt), 'bigint')).else(eb.cast<number>(eb.val(nextPollWithCallback), 'bigint')).end(),
    });
    if (this.dialect === 'postgres') {
      return this.db.transaction().execute(async (trx) => {
        const due = await trx
          .selectFrom('tasks')
          .select(['task_id', 'next_poll_at'])
          .where('status', 'in', [...OPEN_STATUSES])
          .where('next_poll_at', '<=', now)
          .where((eb) => eb.or([eb('lease_until', '<=', now), eb('lease_owner', '=', owner)]))
          .orderBy('next_poll_at')
          .limit(limit)
          .forUpdate()
          .skipLocked()
          .execute();
        if (!due.length) return [];
        if (dueAt) for (const d of due) dueAt.set(d.task_id, Number(d.next_poll_at));
        const rows = await trx
          .updateTable('tasks')
          .set(set)
          .where('task_id', 'in', due.map((d) => d.task_id))
          .returningAll()
          .execute();
        return rows.map(normalizeTask);
      });
    }
    // Most ticks find nothing due: check with a read first, so an idle poller never takes SQLite's
    // write lock (with `dueAt`: the due tasks' times, read the way the claim picks them).
    if (dueAt) {
      const due = await this.db
        .selectFrom('tasks')
        .select(['task_id', 'next_poll_at'])
        .where('status', 'in', [...OPEN_STATUSES])
        .where('next_poll_at', '<=', now)
        .where((w) => w.or([w('lease_until', '<=', now), w('lease_owner', '=', owner)]))
        .orderBy('next_poll_at')
        .limit(limit)
        .execute();
      if (!due.length) return [];
      for (const d of due) dueAt.set(d.task_id, Number(d.next_poll_at));
    } else {
      const any = await this.db
        .selectFrom('tasks')
        .select('task_id')
        .where('status', 'in', [...OPEN_STATUSES])
        .where('next_poll_at', '<=', now)
        .limit(1)
        .executeTakeFirst();
      if (!any) return [];
    }
    // SQLite runs one write statement at a time, so select-and-lease in one UPDATE is atomic.
    const rows = await this.db
      .updateTable('tasks')
      .set(set)
      .where('task_id', 'in', (eb) =>
        eb
          .selectFrom('tasks')
          .select('task_id')
          .where('status', 'in', [...OPEN_STATUSES])
          .where('next_poll_at', '<=', now)
          .where((w) => w.or([w('lease_until', '<=', now), w('lease_owner', '=', owner)]))
          .orderBy('next_poll_at')
          .limit(limit),
      )
      .returningAll()
      .execute();
    return rows.map(normalizeTask);
  }

  /**
   * A provider called back about the task with `token`: an open task becomes due now. Returns
   * 'open', 'closed' (the task already finished) or null (no such token).
   */
  async pollNow(token: string, now: number, seen?: (task: Pick<TaskRow, 'task_id' | 'model' | 'channel' | 'status' | 'trace_parent'>) => void): Promise<'open' | 'closed' | null> {
    const row = await this.db.selectFrom('tasks').select(['task_id', 'model', 'channel', 'status', 'trace_parent']).where('callback_token', '=', token).executeTakeFirst();
    if (!row) return null;
    seen?.(row);
    if (!(OPEN_STATUSES as readonly string[]).includes(row.status)) return 'closed';
    await this.db.updateTable('tasks').set({ next_poll_at: now }).where('task_id', '=', row.task_id).where('status', 'in', [...OPEN_STATUSES]).where('next_poll_at', '>', now).execute();
    return 'open';
  }

  /** Gives up a lease early (on shutdown), so another instance can poll the task at once. */
  async releaseLeases(owner: string): Promise<void> {
    await this.db.updateTable('tasks').set({ lease_owner: null, lease_until: 0 }).where('lease_owner', '=', owner).where('status', 'in', [...OPEN_STATUSES]).execute();
  }

  /**
   * Finished tasks whose credit hold is still open (a process died between the move and the settle).
   * Runs every 30 s and costs in proportion to the held reservations, not to the finished tasks:
   * it walks the partial index of held reservations (`reservations_held`, which the literal
   * `'held'` lets both databases use) and looks each one's task up by `tasks_reservation`. The
   * CROSS JOIN keeps that order on SQLite, whose planner (no table statistics) would otherwise
   * start from every finished task by `tasks_open_due`; PostgreSQL plans it as an inner join.
   */
  async finishedWithOpenHold(limit: number): Promise<TaskRow[]> {
    const rows = await this.db
      .selectFrom('reservations')
      .crossJoin('tasks')
      .selectAll('tasks')
      .where('reservations.state', '=', sql.lit('held'))
      .whereRef('tasks.reservation_id', '=', 'reservations.id')
      .where('tasks.status', 'in', [...TERMINAL_STATUSES])
      .limit(limit)
      .execute();
    return rows.map(normalizeTask);
  }

  async countOpen(): Promise<number> {
    const r = await this.db
      .selectFrom('tasks')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('status', 'in', [...OPEN_STATUSES])
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }
}

/** A row of the task's timeline (operators read it in the admin API); only real status changes. */
async function recordMove(db: Kysely<Database>, taskId: string, from: string, to: string, at: number, detail = ''): Promise<void> {
  await db.insertInto('task_events').values({ task_id: taskId, at, from_status: from, to_status: to, detail }).execute();
}

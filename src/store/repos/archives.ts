import type { Kysely, Selectable } from 'kysely';
import type { Database, TaskArchiveTable } from '../schema.js';
import type { Dialect } from '../db.js';
import { claimPending } from './pending-claim.js';

export type ArchiveRow = Selectable<TaskArchiveTable>;

const NUMERIC: (keyof ArchiveRow)[] = ['attempts', 'next_attempt_at', 'lease_until', 'bytes', 'stored_at', 'created_at'];

function normalize(row: ArchiveRow): ArchiveRow {
  const out = { ...row } as Record<string, unknown>;
  for (const k of NUMERIC) out[k] = Number(out[k]);
  return out as ArchiveRow;
}

/** The row a SUCCESS adds: a copy to make now. */
export function newArchiveJob(taskId: string, objectKey: string, now: number): ArchiveRow {
  return { task_id: taskId, state: 'pending', attempts: 0, next_attempt_at: now, lease_owner: null, lease_until: 0, object_key: objectKey, bytes: 0, content_type: 'video/mp4', stored_at: 0, error: '', created_at: now };
}

/** Adds a copy job unless the task has one (a SUCCESS is archived once, whoever saw it first). */
export async function insertArchiveJob(db: Kysely<Database>, row: ArchiveRow): Promise<void> {
  await db.insertInto('task_archives').values(row).onConflict((oc) => oc.column('task_id').doNothing()).execute();
}

/**
 * All archive SQL. Copies are claimed like poller tasks: due pending rows whose lease ran out get
 * this instance's lease in one statement (PostgreSQL: FOR UPDATE SKIP LOCKED; SQLite: one UPDATE),
 * so two instances never copy the same video at the same time.
 */
export class ArchivesRepo {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
  ) {}

  insert(row: ArchiveRow): Promise<void> {
    return insertArchiveJob(this.db, row);
  }

  async get(taskId: string): Promise<ArchiveRow | undefined> {
    const row = await this.db.selectFrom('task_archives').selectAll().where('task_id', '=', taskId).executeTakeFirst();
    return row ? normalize(row) : undefined;
  }

  async claimDue(owner: string, now: number, leaseUntil: number, limit: number): Promise<ArchiveRow[]> {
    return (await claimPending<ArchiveRow>(this.db, this.dialect, 'task_archives', owner, now, leaseUntil, limit)).map(normalize);
  }


  /** Records a finished copy; false when this instance's lease was lost meanwhile (the other copy counts). */
  async markStored(taskId: string, owner: string, bytes: number, contentType: string, now: number): Promise<boolean> {
    const r = await this.db
      .updateTable('task_archives')
      .set({ state: 'stored', bytes, content_type: contentType, stored_at: now, lease_owner: null, lease_until: 0, error: '' })
      .where('task_id', '=', taskId)
      .where('state', '=', 'pending')
      .where('lease_owner', '=', owner)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /** A failed attempt: try again at `nextAttemptAt`, or give up (`failed`) when there is none. */
  async markAttemptFailed(taskId: string, owner: string, attempts: number, nextAttemptAt: number | null, error: string): Promise<void> {
    await this.db
      .updateTable('task_archives')
      .set({ state: nextAttemptAt === null ? 'failed' : 'pending', attempts, next_attempt_at: nextAttemptAt ?? 0, lease_owner: null, lease_until: 0, error: error.slice(0, 500) })
      .where('task_id', '=', taskId)
      .where('state', '=', 'pending')
      .where('lease_owner', '=', owner)
      .execute();
  }

  /** Stored copies older than `before` (ms), for retention. */
  async storedBefore(before: number, limit: number): Promise<ArchiveRow[]> {
    const rows = await this.db.selectFrom('task_archives').selectAll().where('state', '=', 'stored').where('stored_at', '<', before).orderBy('stored_at').limit(limit).execute();
    return rows.map(normalize);
  }

  async markDeleted(taskId: string): Promise<void> {
    await this.db.updateTable('task_archives').set({ state: 'deleted' }).where('task_id', '=', taskId).where('state', '=', 'stored').execute();
  }

  /** The task was deleted: its copy is not made, kept or served any more, whatever state it was in. */
  async forget(taskId: string): Promise<void> {
    await this.db.updateTable('task_archives').set({ state: 'deleted', lease_owner: null, lease_until: 0 }).where('task_id', '=', taskId).execute();
  }

  async releaseLeases(owner: string): Promise<void> {
    await this.db.updateTable('task_archives').set({ lease_owner: null, lease_until: 0 }).where('lease_owner', '=', owner).where('state', '=', 'pending').execute();
  }

  /** Bytes stored now, for /metrics. */
  async storedBytes(): Promise<number> {
    const r = await this.db.selectFrom('task_archives').select((eb) => eb.fn.sum<number>('bytes').as('b')).where('state', '=', 'stored').executeTakeFirst();
    return Number(r?.b ?? 0);
  }
}

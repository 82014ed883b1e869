import type { Insertable, Kysely, Selectable } from 'kysely';
import type { Database, ImageWaitTable } from '../schema.js';
import type { Dialect } from '../db.js';
import { claimPending } from './pending-claim.js';

export type ImageWaitRow = Selectable<ImageWaitTable>;

const NUMERIC: (keyof ImageWaitRow)[] = ['status', 'input_units', 'started_at', 'next_attempt_at', 'lease_until', 'expires_at', 'created_at'];

function normalize(row: ImageWaitRow): ImageWaitRow {
  const out = { ...row } as Record<string, unknown>;
  for (const k of NUMERIC) out[k] = Number(out[k]);
  return out as ImageWaitRow;
}

/**
 * Queued image requests the client stopped waiting for. A row is claimed with a lease (as the
 * webhook outbox is), so one instance reads its tasks at a time and a dead instance's claims
 * return when the lease runs out; the row is deleted by the claim holder that settles it.
 */
export class ImageWaitsRepo {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
  ) {}

  async insert(row: Insertable<ImageWaitTable>): Promise<void> {
    await this.db.insertInto('image_waits').values(row).execute();
  }

  async claimDue(owner: string, now: number, leaseUntil: number, limit: number): Promise<ImageWaitRow[]> {
    return (await claimPending<ImageWaitRow>(this.db, this.dialect, 'image_waits', owner, now, leaseUntil, limit)).map(normalize);
  }

  /** Tasks still open: the new state, read again at `nextAttemptAt`. */
  async reschedule(id: string, owner: string, tasks: string, nextAttemptAt: number): Promise<void> {
    await this.db.updateTable('image_waits').set({ tasks, next_attempt_at: nextAttemptAt, lease_owner: null, lease_until: 0 }).where('id', '=', id).where('lease_owner', '=', owner).execute();
  }

  /** Takes the row out for settling; false when this owner no longer holds its claim (another instance settles it). */
  async take(id: string, owner: string): Promise<boolean> {
    const r = await this.db.deleteFrom('image_waits').where('id', '=', id).where('lease_owner', '=', owner).executeTakeFirst();
    return Number(r.numDeletedRows) === 1;
  }

  async releaseLeases(owner: string): Promise<void> {
    await this.db.updateTable('image_waits').set({ lease_owner: null, lease_until: 0 }).where('lease_owner', '=', owner).execute();
  }

  async count(): Promise<number> {
    const r = await this.db.selectFrom('image_waits').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirst();
    return Number(r?.n ?? 0);
  }
}

import type { Kysely, Selectable } from 'kysely';
import type { Database, WebhookOutboxTable } from '../schema.js';
import type { Dialect } from '../db.js';
import { claimPending } from './pending-claim.js';

export type OutboxRow = Selectable<WebhookOutboxTable>;

const NUMERIC: (keyof OutboxRow)[] = ['attempts', 'next_attempt_at', 'lease_until', 'last_status', 'created_at', 'delivered_at'];

function normalize(row: OutboxRow): OutboxRow {
  const out = { ...row } as Record<string, unknown>;
  for (const k of NUMERIC) out[k] = Number(out[k]);
  return out as OutboxRow;
}

export async function insertOutbox(db: Kysely<Database>, row: OutboxRow): Promise<void> {
  await db.insertInto('webhook_outbox').values(row).execute();
}

/**
 * The webhook outbox. A delivery is claimed with a lease (PostgreSQL: FOR UPDATE SKIP LOCKED;
 * SQLite: one UPDATE), so while one instance sends it no other does; a dead instance's claims
 * return when their lease runs out, which is what makes delivery at-least-once.
 */
export class WebhookOutboxRepo {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
  ) {}

  async claimDue(owner: string, now: number, leaseUntil: number, limit: number): Promise<OutboxRow[]> {
    return (await claimPending<OutboxRow>(this.db, this.dialect, 'webhook_outbox', owner, now, leaseUntil, limit)).map(normalize);
  }


  async markDelivered(id: string, owner: string, status: number, now: number): Promise<void> {
    await this.db
      .updateTable('webhook_outbox')
      .set({ state: 'delivered', attempts: (eb) => eb('attempts', '+', 1), last_status: status, last_error: '', delivered_at: now, lease_owner: null, lease_until: 0 })
      .where('id', '=', id)
      .where('lease_owner', '=', owner)
      .execute();
  }

  /** A failed attempt: retry at `nextAttemptAt`, or give up (`failed`) when null. */
  async markFailed(id: string, owner: string, attempts: number, nextAttemptAt: number | null, status: number, error: string): Promise<void> {
    await this.db
      .updateTable('webhook_outbox')
      .set({ state: nextAttemptAt === null ? 'failed' : 'pending', attempts, next_attempt_at: nextAttemptAt ?? 0, last_status: status, last_error: error.slice(0, 500), lease_owner: null, lease_until: 0 })
      .where('id', '=', id)
      .where('lease_owner', '=', owner)
      .execute();
  }

  async releaseLeases(owner: string): Promise<void> {
    await this.db.updateTable('webhook_outbox').set({ lease_owner: null, lease_until: 0 }).where('lease_owner', '=', owner).where('state', '=', 'pending').execute();
  }

  async forTask(taskId: string): Promise<OutboxRow[]> {
    const rows = await this.db.selectFrom('webhook_outbox').selectAll().where('task_id', '=', taskId).orderBy('created_at').execute();
    return rows.map(normalize);
  }

  async countPending(): Promise<number> {
    const r = await this.db.selectFrom('webhook_outbox').select((eb) => eb.fn.countAll<number>().as('n')).where('state', '=', 'pending').executeTakeFirst();
    return Number(r?.n ?? 0);
  }

  /** Deliveries by state, for /metrics. */
  async countByState(): Promise<Record<string, number>> {
    const rows = await this.db.selectFrom('webhook_outbox').select(['state', (eb) => eb.fn.countAll<number>().as('n')]).groupBy('state').execute();
    return Object.fromEntries(rows.map((r) => [r.state, Number(r.n)]));
  }
}

import type { Kysely, Selectable } from 'kysely';
import type { ChannelTable, Database } from '../schema.js';
import { OPEN_STATUSES } from './tasks.js';

export type ChannelRow = Selectable<ChannelTable>;

/** Channels added at runtime and the enabled switch of config-file channels. */
export class ChannelsRepo {
  constructor(private readonly db: Kysely<Database>) {}

  /** Every row, removed ones too (their tasks still read through them), by name. */
  async all(): Promise<ChannelRow[]> {
    const rows = await this.db.selectFrom('channels').selectAll().orderBy('name').execute();
    return rows.map((r) => ({ ...r, enabled: Number(r.enabled), created_at: Number(r.created_at), updated_at: Number(r.updated_at), deleted_at: Number(r.deleted_at) }));
  }

  async get(name: string): Promise<ChannelRow | undefined> {
    return (await this.all()).find((r) => r.name === name);
  }

  /**
   * Adds a stored channel; a removed one of the same name (or a stale override) is replaced.
   * False when a live stored channel already has the name.
   */
  async create(row: Omit<ChannelRow, 'created_at' | 'updated_at' | 'deleted_at'>, now = Date.now()): Promise<boolean> {
    try {
      return await this.insert(row, now);
    } catch (err) {
      // Two instances adding the same name at once: the one that lost the race finds the other's row.
      const other = await this.db.selectFrom('channels').select(['kind', 'deleted_at']).where('name', '=', row.name).executeTakeFirst();
      if (other && other.kind === 'stored' && Number(other.deleted_at) === 0) return false;
      throw err;
    }
  }

  private insert(row: Omit<ChannelRow, 'created_at' | 'updated_at' | 'deleted_at'>, now: number): Promise<boolean> {
    return this.db.transaction().execute(async (tx) => {
      const existing = await tx.selectFrom('channels').select(['kind', 'deleted_at']).where('name', '=', row.name).executeTakeFirst();
      if (existing && existing.kind === 'stored' && Number(existing.deleted_at) === 0) return false;
      if (existing) await tx.deleteFrom('channels').where('name', '=', row.name).execute();
      await tx.insertInto('channels').values({ ...row, created_at: now, updated_at: now, deleted_at: 0 }).execute();
      return true;
    });
  }

  /** Changes a live stored channel; false when there is none of that name. */
  async update(name: string, set: Partial<Pick<ChannelRow, 'body' | 'credentials' | 'enabled'>>, now = Date.now()): Promise<boolean> {
    const r = await this.db.updateTable('channels').set({ ...set, updated_at: now }).where('name', '=', name).where('kind', '=', 'stored').where('deleted_at', '=', 0).executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /** Drops the enabled switch of a config-file channel (the file's value is in force again). */
  async clearOverride(name: string): Promise<void> {
    await this.db.deleteFrom('channels').where('name', '=', name).where('kind', '=', 'override').execute();
  }

  /** The enabled switch of a config-file channel. */
  async setOverride(name: string, enabled: boolean, now = Date.now()): Promise<void> {
    await this.db
      .insertInto('channels')
      .values({ name, kind: 'override', body: '{}', credentials: null, enabled: enabled ? 1 : 0, created_at: now, updated_at: now, deleted_at: 0 })
      .onConflict((oc) => oc.column('name').doUpdateSet({ kind: 'override', body: '{}', credentials: null, enabled: enabled ? 1 : 0, updated_at: now, deleted_at: 0 }))
      .execute();
  }

  /** Removes a live stored channel (kept, hidden, for its tasks; wipeSpentCredentials drops its credentials once they need none); false when there is none. */
  async remove(name: string, now = Date.now()): Promise<boolean> {
    const r = await this.db.updateTable('channels').set({ deleted_at: now, enabled: 0, updated_at: now }).where('name', '=', name).where('kind', '=', 'stored').where('deleted_at', '=', 0).executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /**
   * Wipes the credentials of removed channels whose tasks no longer need them: none open (still
   * polled through the channel) and none whose video link is still valid (served through it). With
   * `name`, only that channel's. Answers the names wiped.
   */
  async wipeSpentCredentials(now = Date.now(), name?: string): Promise<string[]> {
    let q = this.db.selectFrom('channels').select('name').where('kind', '=', 'stored').where('deleted_at', '>', 0).where('credentials', 'is not', null);
    if (name !== undefined) q = q.where('name', '=', name);
    const wiped: string[] = [];
    for (const { name: n } of await q.execute()) {
      const busy = await this.db
        .selectFrom('tasks')
        .select('task_id')
        .where('channel', '=', n)
        .where((eb) => eb.or([eb('status', 'in', [...OPEN_STATUSES]), eb('url_expires_at', '>', now)]))
        .limit(1)
        .executeTakeFirst();
      if (busy) continue;
      const r = await this.db.updateTable('channels').set({ credentials: null, updated_at: now }).where('name', '=', n).where('kind', '=', 'stored').where('deleted_at', '>', 0).executeTakeFirst();
      if (Number(r.numUpdatedRows) > 0) wiped.push(n);
    }
    return wiped;
  }

  /** Seals a row's credentials anew (key rotation) unless it changed meanwhile. */
  async reseal(name: string, from: string, to: string): Promise<void> {
    await this.db.updateTable('channels').set({ credentials: to }).where('name', '=', name).where('credentials', '=', from).execute();
  }
}

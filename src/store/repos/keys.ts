import { sql, type Kysely, type Selectable } from 'kysely';
import type { ApiKeyTable, Database } from '../schema.js';
import { randomBase62 } from '../../ids.js';
import { prepared } from '../prepared.js';

export type ApiKeyRow = Selectable<ApiKeyTable>;

/** A key row with what the authenticator needs of its project (nulls without one). */
export type KeyWithProject = ApiKeyRow & {
  project_name: string | null;
  project_price_ratio: number | null;
  project_budget_micros: number | null;
  project_budget_period: string | null;
};

export interface NewKey {
  name: string;
  keyHash: string;
  keyPrefix: string;
  models?: string[] | null;
  rpm?: number;
  concurrency?: number;
  creditMicros?: number | null;
  expiresAt?: number | null;
  projectId?: string | null;
  budgetMicros?: number | null;
  budgetPeriod?: string | null;
}

export class KeysRepo {
  // The authenticator's lookup (once per key per cache period on every instance): compiled once.
  private readonly byHash;

  constructor(private readonly db: Kysely<Database>) {
    this.byHash = prepared(
      db,
      (hash: string) =>
        db
          .selectFrom('api_keys')
          .leftJoin('projects', 'projects.id', 'api_keys.project_id')
          .selectAll('api_keys')
          .select(['projects.name as project_name', 'projects.price_ratio as project_price_ratio', 'projects.budget_micros as project_budget_micros', 'projects.budget_period as project_budget_period'])
          .where('api_keys.key_hash', '=', hash),
      [''],
    );
  }

  async create(k: NewKey, now = Date.now()): Promise<ApiKeyRow> {
    const row: ApiKeyRow = {
      id: `key_${randomBase62(16)}`,
      name: k.name,
      key_hash: k.keyHash,
      key_prefix: k.keyPrefix,
      models: k.models && k.models.length ? JSON.stringify(k.models) : null,
      rpm: k.rpm ?? 0,
      concurrency: k.concurrency ?? 0,
      credit_micros: k.creditMicros ?? null,
      overage_micros: 0,
      expires_at: k.expiresAt ?? null,
      revoked_at: null,
      created_at: now,
      project_id: k.projectId ?? null,
      budget_micros: k.budgetMicros ?? null,
      budget_period: k.budgetPeriod ?? null,
    };
    await this.db.insertInto('api_keys').values(row).execute();
    return row;
  }

  async findByHash(hash: string): Promise<KeyWithProject | undefined> {
    return (await this.byHash(hash))[0];
  }

  findById(id: string): Promise<ApiKeyRow | undefined> {
    return this.db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst();
  }

  list(): Promise<ApiKeyRow[]> {
    return this.db.selectFrom('api_keys').selectAll().orderBy('created_at').orderBy('id').execute();
  }

  /**
   * Creates the key only when no key exists at all, atomically: instances starting together on one
   * empty database create one first key between them (PostgreSQL: a transaction-scoped advisory
   * lock serializes the check and the insert). Returns the row, or null when keys existed.
   */
  async createFirst(k: NewKey, dialect: 'sqlite' | 'postgres', now = Date.now()): Promise<ApiKeyRow | null> {
    return this.db.transaction().execute(async (trx) => {
      if (dialect === 'postgres') await sql`select pg_advisory_xact_lock(7346114)`.execute(trx);
      const any = await trx.selectFrom('api_keys').select('id').limit(1).executeTakeFirst();
      return any ? null : new KeysRepo(trx).create(k, now);
    });
  }

  async count(): Promise<number> {
    const r = await this.db.selectFrom('api_keys').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return Number(r.n);
  }

  /**
   * A page of keys, oldest first, after the key `afterId` (ids sort with creation only by chance, so
   * the cursor is (created_at, id)); `search` matches part of a name (any case) or the start of an id.
   */
  async page(limit: number, after?: { createdAt: number; id: string }, search?: string): Promise<ApiKeyRow[]> {
    let q = this.db.selectFrom('api_keys').selectAll().orderBy('created_at').orderBy('id').limit(limit);
    if (after) q = q.where((eb) => eb.or([eb('created_at', '>', after.createdAt), eb.and([eb('created_at', '=', after.createdAt), eb('id', '>', after.id)])]));
    if (search) {
      // The text is matched literally: its % and _ are escaped, so they match only themselves.
      const inName = `%${search.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      q = q.where(sql<boolean>`(lower(name) like ${inName} escape '\\' or substr(id, 1, ${search.length}) = ${search})`);
    }
    return q.execute();
  }

  activeByName(name: string): Promise<ApiKeyRow[]> {
    return this.db.selectFrom('api_keys').selectAll().where('name', '=', name).where('revoked_at', 'is', null).execute();
  }

  /** Changes a key's name, allow-list, limits or expiry; false when no such key. */
  async update(id: string, patch: Partial<Pick<ApiKeyRow, 'name' | 'models' | 'rpm' | 'concurrency' | 'expires_at' | 'project_id' | 'budget_micros' | 'budget_period'>>): Promise<boolean> {
    if (!Object.keys(patch).length) return (await this.findById(id)) !== undefined;
    const r = await this.db.updateTable('api_keys').set(patch).where('id', '=', id).executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /** Marks the key revoked; false when no such key or already revoked. */
  async revoke(id: string, now = Date.now()): Promise<boolean> {
    const r = await this.db.updateTable('api_keys').set({ revoked_at: now }).where('id', '=', id).where('revoked_at', 'is', null).executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }
}

/** The allow-list of a key row, or null for every model. */
export function keyModels(row: Pick<ApiKeyRow, 'models'>): string[] | null {
  if (!row.models) return null;
  const parsed: unknown = JSON.parse(row.models);
  return Array.isArray(parsed) ? parsed.filter((m): m is string => typeof m === 'string') : null;
}

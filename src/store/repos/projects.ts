import type { Kysely, Selectable } from 'kysely';
import type { Database, ProjectTable } from '../schema.js';
import { randomBase62 } from '../../ids.js';

export type ProjectRow = Selectable<ProjectTable>;

export type ProjectPatch = Partial<Pick<ProjectRow, 'name' | 'price_ratio' | 'budget_micros' | 'budget_period'>>;

function normalize(r: ProjectRow): ProjectRow {
  return {
    ...r,
    price_ratio: r.price_ratio === null ? null : Number(r.price_ratio),
    budget_micros: r.budget_micros === null ? null : Number(r.budget_micros),
    created_at: Number(r.created_at),
    updated_at: Number(r.updated_at),
  };
}

/** Projects: named groups of keys with a price ratio and a budget of their own. */
export class ProjectsRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async create(p: { name: string } & ProjectPatch, now = Date.now()): Promise<ProjectRow> {
    const row: ProjectRow = {
      id: `prj_${randomBase62(16)}`,
      name: p.name,
      price_ratio: p.price_ratio ?? null,
      budget_micros: p.budget_micros ?? null,
      budget_period: p.budget_period ?? null,
      created_at: now,
      updated_at: now,
    };
    await this.db.insertInto('projects').values(row).execute();
    return row;
  }

  async list(): Promise<ProjectRow[]> {
    return (await this.db.selectFrom('projects').selectAll().orderBy('name').execute()).map(normalize);
  }

  async find(idOrName: string): Promise<ProjectRow | undefined> {
    const row = await this.db.selectFrom('projects').selectAll().where((eb) => eb.or([eb('id', '=', idOrName), eb('name', '=', idOrName)])).executeTakeFirst();
    return row && normalize(row);
  }

  /** False when no such project. */
  async update(id: string, patch: ProjectPatch, now = Date.now()): Promise<boolean> {
    const r = await this.db.updateTable('projects').set({ ...patch, updated_at: now }).where('id', '=', id).executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /** Active keys per project. */
  async keyCounts(): Promise<Map<string, number>> {
    const rows = await this.db
      .selectFrom('api_keys')
      .select(['project_id', (eb) => eb.fn.countAll<number>().as('n')])
      .where('project_id', 'is not', null)
      .where('revoked_at', 'is', null)
      .groupBy('project_id')
      .execute();
    return new Map(rows.map((r) => [r.project_id as string, Number(r.n)]));
  }
}

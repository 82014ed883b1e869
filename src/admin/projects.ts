import type { Config } from '../config/schema.js';
import type { ProjectRow, ProjectsRepo } from '../store/repos/projects.js';
import type { ReservationsRepo } from '../store/repos/reservations.js';
import { budgetPatch, budgetViews, type BudgetView } from './budget-fields.js';
import { adminErrors, checkedName } from './errors.js';

// Projects as operators manage them: one service behind `mediagate projects …` and
// /admin/api/projects. A project groups keys; its price ratio multiplies every price they pay and
// its budget caps what they spend together per window.

export interface ProjectView extends BudgetView {
  id: string;
  name: string;
  /** Multiplies every price the project's keys pay (1 = list price). */
  price_ratio: number;
  /** Active keys in the project. */
  keys: number;
  created_at: string;
  updated_at: string;
}

export interface ProjectInput {
  name?: unknown;
  price_ratio?: unknown;
  budget_usd?: unknown;
  budget_period?: unknown;
}

const FIELDS = ['name', 'price_ratio', 'budget_usd', 'budget_period'];
const MAX_RATIO = 1000;

export interface ProjectAdminDeps {
  config: Config;
  projects: ProjectsRepo;
  reservations: ReservationsRepo;
  /** Running instances must see the change at once (keys carry their project's ratio and budget). */
  changed?: () => Promise<void> | void;
}

export class ProjectAdmin {
  constructor(private readonly d: ProjectAdminDeps) {}

  private async views(rows: ProjectRow[]): Promise<ProjectView[]> {
    const counts = await this.d.projects.keyCounts();
    const budgets = await budgetViews(this.d.config, this.d.reservations, rows.map((r) => ({ scope: `project:${r.id}`, budget_micros: r.budget_micros, budget_period: r.budget_period })));
    return rows.map((r) => ({
      id: r.id,
      name: r.name,
      price_ratio: r.price_ratio ?? 1,
      keys: counts.get(r.id) ?? 0,
      ...budgets.get(`project:${r.id}`)!,
      created_at: new Date(r.created_at).toISOString(),
      updated_at: new Date(r.updated_at).toISOString(),
    }));
  }

  async list(): Promise<ProjectView[]> {
    return this.views(await this.d.projects.list());
  }

  /** A project by id or name. */
  async get(idOrName: string): Promise<ProjectView> {
    return (await this.views([await this.row(idOrName)]))[0];
  }

  /** The row of a project named by id or name, or a 404. */
  async row(idOrName: string): Promise<ProjectRow> {
    const row = await this.d.projects.find(idOrName);
    if (!row) throw adminErrors.notFound(`The project ${JSON.stringify(idOrName)}`);
    return row;
  }

  async create(input: ProjectInput): Promise<ProjectView> {
    this.known(input);
    const name = this.name(input.name);
    if (name === undefined) throw adminErrors.invalid('name is required');
    if (await this.d.projects.find(name)) throw adminErrors.conflict(`a project named "${name}" exists already`, 'duplicate_name');
    const ratio = this.ratio(input.price_ratio);
    const row = await this.d.projects.create({ name, price_ratio: ratio ?? null, ...budgetPatch(input, null) });
    return (await this.views([row]))[0];
  }

  async update(idOrName: string, input: ProjectInput): Promise<ProjectView> {
    this.known(input);
    const row = await this.row(idOrName);
    const patch: Parameters<ProjectsRepo['update']>[1] = { ...budgetPatch(input, row) };
    const name = this.name(input.name);
    if (name !== undefined && name !== row.name) {
      if (await this.d.projects.find(name)) throw adminErrors.conflict(`a project named "${name}" exists already`, 'duplicate_name');
      patch.name = name;
    }
    if (input.price_ratio !== undefined) patch.price_ratio = this.ratio(input.price_ratio) ?? null;
    await this.d.projects.update(row.id, patch);
    await this.d.changed?.();
    return this.get(row.id);
  }

  private known(input: ProjectInput): void {
    for (const k of Object.keys(input)) if (!FIELDS.includes(k)) throw adminErrors.invalid(`${k} is not a project field (fields: ${FIELDS.join(', ')})`);
  }

  private name(v: unknown): string | undefined {
    if (v === undefined) return undefined;
    if (typeof v !== 'string' || !v.trim() || v.length > 100) throw adminErrors.invalid('name must be a non-empty string of at most 100 characters');
    if (/^(prj|key)_/.test(v.trim())) throw adminErrors.invalid('name must not start with "prj_" or "key_" (those are ids)');
    return checkedName(v.trim());
  }

  /** null (or absent) = 1, list price. */
  private ratio(v: unknown): number | null | undefined {
    if (v === undefined) return undefined;
    if (v === null) return null;
    const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
    if (typeof n !== 'number' || !Number.isFinite(n) || n < 0 || n > MAX_RATIO) throw adminErrors.invalid(`price_ratio must be a number from 0 to ${MAX_RATIO} (1 = list price, 0.8 = 20% off, null = 1)`);
    return n;
  }
}

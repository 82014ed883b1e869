import type { Config } from '../config/schema.js';
import { generateApiKey, hashApiKey, displayPrefix } from '../auth/keys.js';
import { keyModels, type ApiKeyRow, type KeysRepo } from '../store/repos/keys.js';
import type { ReservationsRepo } from '../store/repos/reservations.js';
import type { HoldsRepo } from '../store/repos/holds.js';
import type { LeasesRepo } from '../store/repos/leases.js';
import type { UsageReportsRepo } from '../store/repos/usage-reports.js';
import { adminErrors, checkedName } from './errors.js';
import { MAX_USD, parseSignedUsd, usd } from './money.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import type { ProjectsRepo } from '../store/repos/projects.js';
import { budgetPatch, budgetViews, type BudgetView } from './budget-fields.js';

// Application keys as operators manage them: one service behind `mediagate keys …` and
// /admin/api/keys, so both validate and answer alike. Errors are GatewayErrors of the admin
// family; the CLI prints their message.

export interface KeyView extends BudgetView {
  id: string;
  name: string;
  /** The key's first characters, never enough to use it. */
  prefix: string;
  models: string[] | null;
  rpm: number;
  concurrency: number;
  /** Spendable balance in USD (null = unlimited). */
  credit_usd: string | null;
  /** Reserved by requests and tasks still running; not part of credit_usd. */
  held_usd: string;
  /** In running instances' credit leases (chat and image holds come from there); not part of credit_usd, still the key's to spend. */
  leased_usd: string;
  /** Real costs beyond hold and balance: the key is refused until a top-up pays them. */
  owes_usd: string;
  /** The project's name, or null. */
  project: string | null;
  /** Charged to the key in the ledger to date. */
  spent_usd: string;
  /** The key's last request in the ledger; null when it has made none. */
  last_used_at: string | null;
  status: 'active' | 'revoked' | 'expired';
  expires_at: string | null;
  revoked_at: string | null;
  created_at: string;
}

export interface KeyInput {
  name?: unknown;
  models?: unknown;
  rpm?: unknown;
  concurrency?: unknown;
  /** USD as a string or number; absent or null = unlimited. */
  credit_usd?: unknown;
  /** ISO-8601 time or null. */
  expires_at?: unknown;
  /** A project's name or id; null takes the key out of its project. */
  project?: unknown;
  /** USD per budget_period; null removes the key's own budget. */
  budget_usd?: unknown;
  budget_period?: unknown;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(Number(ms)).toISOString());
const MAX_LIMIT = 1_000_000_000;

export interface KeyAdminDeps {
  config: Config;
  keys: KeysRepo;
  reservations: ReservationsRepo;
  holds: HoldsRepo;
  leases: LeasesRepo;
  projects: ProjectsRepo;
  usage: UsageReportsRepo;
  /** Called after a change that running instances must see at once (revoke, limits, expiry). */
  changed?: () => Promise<void> | void;
}

export class KeyAdmin {
  constructor(private readonly d: KeyAdminDeps) {}

  private async views(rows: ApiKeyRow[], now = Date.now()): Promise<KeyView[]> {
    const held = await this.d.holds.heldByKey(rows.map((r) => r.id));
    const leased = await this.d.leases.leasedByKey(rows.map((r) => r.id));
    const projects = rows.some((r) => r.project_id) ? new Map((await this.d.projects.list()).map((p) => [p.id, p.name])) : new Map<string, string>();
    const budgets = await budgetViews(this.d.config, this.d.reservations, rows.map((r) => ({ scope: `key:${r.id}`, budget_micros: r.budget_micros === null ? null : Number(r.budget_micros), budget_period: r.budget_period })), now);
    const used = await this.d.usage.perKey(rows.map((r) => r.id));
    return rows.map((r) => ({
      id: r.id,
      name: r.name,
      prefix: `${r.key_prefix}…`,
      models: keyModels(r),
      rpm: Number(r.rpm),
      concurrency: Number(r.concurrency),
      credit_usd: r.credit_micros === null ? null : usd(Number(r.credit_micros)),
      held_usd: usd(held.get(r.id) ?? 0),
      leased_usd: usd(leased.get(r.id) ?? 0),
      owes_usd: usd(Number(r.overage_micros ?? 0)),
      project: r.project_id ? (projects.get(r.project_id) ?? null) : null,
      ...budgets.get(`key:${r.id}`)!,
      spent_usd: usd(used.get(r.id)?.cost_micros ?? 0),
      last_used_at: iso(used.get(r.id)?.last_ms ?? null),
      status: r.revoked_at !== null ? 'revoked' : r.expires_at !== null && Number(r.expires_at) <= now ? 'expired' : 'active',
      expires_at: iso(r.expires_at),
      revoked_at: iso(r.revoked_at),
      created_at: iso(r.created_at)!,
    }));
  }

  async get(id: string): Promise<KeyView> {
    const row = await this.d.keys.findById(id);
    if (!row) throw adminErrors.notFound(`The key ${JSON.stringify(id)}`);
    return (await this.views([row]))[0];
  }

  /** A page of keys, oldest first; `q` matches part of a name (any case) or the start of an id. */
  async list(opts: { limit?: number; cursor?: string; q?: string } = {}): Promise<{ data: KeyView[]; next_cursor: string | null }> {
    const limit = opts.limit ?? 100;
    const c = decodeCursor(opts.cursor || undefined, ['number', 'string']);
    const after = c && { createdAt: c[0], id: c[1] };
    const rows = await this.d.keys.page(limit + 1, after, opts.q || undefined);
    const more = rows.length > limit;
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return { data: await this.views(page), next_cursor: more && last ? encodeCursor(Number(last.created_at), last.id) : null };
  }

  async all(): Promise<KeyView[]> {
    return this.views(await this.d.keys.list());
  }

  /**
   * Names are how operators tell keys apart in lists and usage; two active keys of one name are
   * almost always a mistake (a script run twice), so a duplicate takes `allowDuplicateName`.
   */
  async create(input: KeyInput, opts: { allowDuplicateName?: boolean } = {}): Promise<{ key: KeyView; secret: string }> {
    const name = this.name(input.name);
    if (name === undefined) throw adminErrors.invalid('name is required');
    if (!opts.allowDuplicateName) {
      const same = await this.d.keys.activeByName(name);
      if (same.length) {
        throw adminErrors.conflict(`an active key named "${name}" exists already (${same.map((k) => k.id).join(', ')}); choose another name, revoke it, or allow a duplicate name`, 'duplicate_name');
      }
    }
    const models = this.models(input.models);
    const budget = budgetPatch(input, null);
    const creditMicros = input.credit_usd === undefined || input.credit_usd === null ? null : this.amount(input.credit_usd, 'credit_usd', false);
    const secret = generateApiKey();
    const row = await this.d.keys.create({
      name,
      keyHash: hashApiKey(secret),
      keyPrefix: displayPrefix(secret),
      models: models ?? null,
      rpm: this.limit(input.rpm, 'rpm') ?? this.d.config.limits.key_rpm,
      concurrency: this.limit(input.concurrency, 'concurrency') ?? this.d.config.limits.key_concurrency,
      creditMicros,
      expiresAt: this.expiry(input.expires_at) ?? null,
      projectId: (await this.project(input.project)) ?? null,
      budgetMicros: budget.budget_micros ?? null,
      budgetPeriod: budget.budget_period ?? null,
    });
    return { key: (await this.views([row]))[0], secret };
  }

  /** Changes only the fields present; `models: null` allows every model, `expires_at: null` never expires. */
  async update(id: string, input: KeyInput): Promise<KeyView> {
    for (const k of Object.keys(input)) {
      if (!['name', 'models', 'rpm', 'concurrency', 'expires_at', 'project', 'budget_usd', 'budget_period'].includes(k)) throw adminErrors.invalid(`${k} cannot be changed here${k === 'credit_usd' ? ' (use the credit endpoint)' : ''}`);
    }
    const patch: Parameters<KeysRepo['update']>[1] = {};
    const name = this.name(input.name);
    if (name !== undefined) patch.name = name;
    if ('models' in input) {
      const models = this.models(input.models);
      patch.models = models && models.length ? JSON.stringify(models) : null;
    }
    const rpm = this.limit(input.rpm, 'rpm');
    if (rpm !== undefined) patch.rpm = rpm;
    const concurrency = this.limit(input.concurrency, 'concurrency');
    if (concurrency !== undefined) patch.concurrency = concurrency;
    if ('expires_at' in input) patch.expires_at = this.expiry(input.expires_at) ?? null;
    if (input.project !== undefined) patch.project_id = (await this.project(input.project)) ?? null;
    if (input.budget_usd !== undefined || input.budget_period !== undefined) {
      const row = await this.d.keys.findById(id);
      if (!row) throw adminErrors.notFound(`The key ${JSON.stringify(id)}`);
      Object.assign(patch, budgetPatch(input, { budget_micros: row.budget_micros === null ? null : Number(row.budget_micros), budget_period: row.budget_period }));
    }
    if (!(await this.d.keys.update(id, patch))) throw adminErrors.notFound(`The key ${JSON.stringify(id)}`);
    await this.d.changed?.();
    return this.get(id);
  }

  async revoke(id: string): Promise<KeyView> {
    if (!(await this.d.keys.revoke(id))) {
      const row = await this.d.keys.findById(id);
      if (!row) throw adminErrors.notFound(`The key ${JSON.stringify(id)}`);
      throw adminErrors.conflict(`The key ${id} is already revoked.`, 'already_revoked');
    }
    await this.d.changed?.();
    return this.get(id);
  }

  /** Adds a signed USD amount (`"+10"`, `"-2.5"`) to a limited key's balance; never below zero (what is held stays held). */
  async credit(id: string, amount: unknown): Promise<KeyView> {
    const micros = this.amount(amount, 'usd', true);
    const before = await this.d.reservations.balance(id);
    if (before === undefined) throw adminErrors.notFound(`The key ${JSON.stringify(id)}`);
    if (before === null) throw adminErrors.conflict(`key ${id} has unlimited credit; there is no balance to change`, 'unlimited_credit');
    if (!(await this.d.reservations.topUp(id, micros))) {
      throw adminErrors.conflict(`key ${id} has $${usd(before)} left; cannot take $${usd(-micros)} (a balance never goes below zero)`, 'insufficient_balance');
    }
    return this.get(id);
  }

  /** The id of the project named (by name or id); null = none. */
  private async project(v: unknown): Promise<string | null | undefined> {
    if (v === undefined) return undefined;
    if (v === null || v === '' || v === 'none') return null;
    if (typeof v !== 'string') throw adminErrors.invalid('project must be a project name or id (null for none)');
    const row = await this.d.projects.find(v);
    if (!row) throw adminErrors.invalid(`project: no project named ${JSON.stringify(v)} (create it first: mediagate projects create)`);
    return row.id;
  }

  private name(v: unknown): string | undefined {
    if (v === undefined) return undefined;
    if (typeof v !== 'string' || !v.trim() || v.length > 100) throw adminErrors.invalid('name must be a non-empty string of at most 100 characters');
    return checkedName(v.trim());
  }

  private models(v: unknown): string[] | null | undefined {
    if (v === undefined) return undefined;
    if (v === null) return null;
    const list = typeof v === 'string' ? v.split(',').map((s) => s.trim()).filter(Boolean) : v;
    if (!Array.isArray(list) || !list.every((m) => typeof m === 'string')) throw adminErrors.invalid('models must be a list of model ids (or null for every model)');
    for (const m of list) if (!this.d.config.models[m]) throw adminErrors.invalid(`models: ${JSON.stringify(m)} is not a configured model`);
    return list.length ? [...new Set(list as string[])] : null;
  }

  private limit(v: unknown, field: string): number | undefined {
    if (v === undefined || v === null) return undefined;
    const n = typeof v === 'string' && /^\s*\d{1,10}\s*$/.test(v) ? Number(v) : v;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > MAX_LIMIT) {
      throw adminErrors.invalid(`${field} must be a whole number from 0 (no limit) to ${MAX_LIMIT} (got ${JSON.stringify(typeof v === 'string' ? v.slice(0, 40) : v) ?? String(v)})`);
    }
    return n;
  }

  private expiry(v: unknown): number | null | undefined {
    if (v === undefined) return undefined;
    if (v === null || v === '') return null;
    const ms = typeof v === 'string' ? Date.parse(v) : NaN;
    if (!Number.isFinite(ms)) throw adminErrors.invalid('expires_at must be an ISO-8601 time (e.g. 2027-01-31T00:00:00Z) or null');
    return ms;
  }

  private amount(v: unknown, field: string, signed: boolean): number {
    const text = typeof v === 'number' && Number.isFinite(v) ? String(v) : v;
    const micros = typeof text === 'string' ? parseSignedUsd(text, signed) : null;
    if (micros === null || (!signed && micros < 0)) {
      throw adminErrors.invalid(
        signed
          ? `${field} must be a string: "+" to add or "-" to take away, then an amount of USD up to ${MAX_USD} with at most 6 decimals (e.g. "+10", "-2.5")`
          : `${field} must be an amount of USD from 0 to ${MAX_USD} with at most 6 decimals (e.g. "10")`,
      );
    }
    if (signed && micros === 0) throw adminErrors.invalid(`${field} must not be zero`);
    return micros;
  }
}

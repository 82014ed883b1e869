import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { interpolate, loadConfig, ConfigError, type LoadedConfig } from './config-file/loader.js';
import { helpText, parseCommand, usageLine, UsageError, wantsHelp, wholeNumber, type CommandSpec } from './cli/args.js';
import type { Config } from './config/schema.js';
import { openStore, parseDatabaseUrl } from './store/db.js';
import { acquireInstanceLock, InstanceLockError } from './store/instance-lock.js';
import { userInfo } from 'node:os';
import { KeysRepo } from './store/repos/keys.js';
import { AuditRepo } from './store/repos/audit.js';
import { UsageReportsRepo } from './store/repos/usage-reports.js';
import type { Store } from './store/db.js';
import { GatewayError } from './http/errors.js';
import { escapeUnsafe } from './http/names.js';
import { Audit } from './admin/audit.js';
import { createAdminAccess, createChannelEditor, createKeyAdmin, createProjectAdmin } from './admin/index.js';
import type { ProjectInput, ProjectView } from './admin/projects.js';
import type { BudgetView } from './admin/budget-fields.js';
import { auditDetail } from './admin/channel-editor.js';
import { ChannelsRepo } from './store/repos/channels.js';
import { SecretBox } from './store/secret-box.js';
import type { ChannelBody } from './cluster/channels.js';
import { parse as parseYaml } from 'yaml';
import { UsageAdmin } from './admin/usage.js';
import type { KeyInput, KeyView } from './admin/keys.js';
import { ReservationsRepo } from './store/repos/reservations.js';
import { UsageRepo, type UsageTotal } from './store/repos/usage.js';
import { generateApiKey, hashApiKey, displayPrefix } from './auth/keys.js';
import { buildApp } from './app.js';
import { createServices, GatewayConfigError } from './services.js';
import { startCluster } from './cluster/index.js';
import { publishOnce } from './cluster/bus.js';
import { WebhookSecretsRepo } from './store/repos/webhook-secrets.js';
import { newWebhookSecret } from './tasks/webhooks/signing.js';



// Every line the CLI prints may hold names from the database (stored before names were checked,
// too): their control characters are written out as \uXXXX, so a name can never move the cursor,
// recolour the terminal, fake another line or reverse the text around it. JSON stays valid JSON.
function out(line: string): void {
  process.stdout.write(escapeUnsafe(line) + '\n');
}

/** An error line on stderr; a message of several lines (a YAML error with its caret) keeps its line breaks. */
function fail(message: string, tail = ''): void {
  process.stderr.write(`mediagate: ${message.split('\n').map(escapeUnsafe).join('\n')}\n${tail}`);
}

export function usdToMicros(usd: number): number {
  return Math.round(usd * 1_000_000);
}

function microsToUsd(m: number | null): string {
  return m === null ? 'unlimited' : `$${(m / 1_000_000).toFixed(6)}`;
}

/** The SQLite file of a config, or null for PostgreSQL and in-memory databases. */
function sqliteFile(config: Config): string | null {
  const { dialect, target } = parseDatabaseUrl(config.database.url);
  return dialect === 'sqlite' && target !== ':memory:' ? target : null;
}

/**
 * Opens the store for one command. Commands that only read or change existing rows pass
 * `mustExist`: run from the wrong directory, they would otherwise create (and report on) a fresh,
 * empty database instead of the one the server uses.
 */
async function withStore<T>(config: Config, fn: (store: Awaited<ReturnType<typeof openStore>>) => Promise<T>, opts: { mustExist?: boolean } = {}): Promise<T> {
  const file = sqliteFile(config);
  if (opts.mustExist && file && !existsSync(file)) {
    throw new CommandError(
      `no database at ${file} (from database.url ${config.database.url}). Run the command where the server runs, or point MEDIAGATE_CONFIG (or DATABASE_URL) at its database; nothing was created.`,
    );
  }
  const fresh = file !== null && !existsSync(file);
  const store = await openStore(config.database.url, { timeouts: config.database });
  // Never silently: a new file where the operator expected the server's database is the mistake
  // of running from another directory.
  if (fresh) process.stderr.write(`mediagate: created a new, empty database at ${resolve(file)}\n`);
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

/** The key and admin services on a store the command opened (no relay, no tasks). */
function adminOn(config: Config, s: Store) {
  const parts = { config, store: s, keys: new KeysRepo(s.db), reservations: new ReservationsRepo(s.db), usage: new UsageRepo(s.db) };
  const audit = new Audit(new AuditRepo(s.db));
  let who = 'cli';
  try {
    who = `cli (${userInfo().username})`;
  } catch {
    // no user name on this system
  }
  return { keys: createKeyAdmin(parts), projects: createProjectAdmin(parts), access: createAdminAccess(parts), record: (action: string, target: string, detail: Record<string, unknown> = {}) => audit.record(who, action, target, detail) };
}

/** The service layer's refusals as CLI outcomes: a conflict with the data is status 1, a bad argument or unknown id status 2. */
async function asCommand<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (!(err instanceof GatewayError)) throw err;
    if (err.code === 'duplicate_name') throw new CommandError(err.message.replace('allow a duplicate name', 'pass --allow-duplicate-name'));
    // Nothing to top up on an unlimited key: the arguments were wrong, as with an unknown id.
    if (err.status === 409 && err.code !== 'unlimited_credit') throw new CommandError(err.message);
    throw new UsageError(err.message);
  }
}

function keyLine(k: KeyView): string {
  const credit = k.credit_usd === null ? 'unlimited' : `$${k.credit_usd}${Number(k.held_usd) ? ` (+$${k.held_usd} held)` : ''}${Number(k.leased_usd) ? `  leased=$${k.leased_usd}` : ''}`;
  return `${k.id}  ${k.name}  ${k.prefix}  ${k.status}  models=${k.models ? k.models.join(',') : '*'}  rpm=${k.rpm || '-'}  concurrency=${k.concurrency || '-'}  credit=${credit}${Number(k.owes_usd) > 0 ? `  owes=$${k.owes_usd}` : ''}${k.project ? `  project=${k.project}` : ''}${budgetText(k)}${k.expires_at ? '  expires=' + k.expires_at : ''}`;
}

/** `  budget=$spent/$budget per period (resets …)`, or nothing without a budget. */
function budgetText(v: BudgetView): string {
  if (v.budget_usd === null) return '';
  const short = (usd: string | null) => `$${(usd ?? '0').replace(/(\.\d\d\d*?)0+$/, '$1')}`;
  const held = Number(v.budget_held_usd) ? ` +${short(v.budget_held_usd)} held` : '';
  return `  budget=${short(v.budget_spent_usd)}${held} of ${short(v.budget_usd)}/${v.budget_period} (resets ${v.budget_resets_at})`;
}

function projectLine(p: ProjectView): string {
  return `${p.id}  ${p.name}  keys=${p.keys}  price_ratio=${p.price_ratio}${budgetText(p) || '  budget=none'}`;
}

/** --config FILE: every command that reads the configuration takes it (it wins over MEDIAGATE_CONFIG). */
const CONFIG_OPTION = { config: { type: 'string', arg: 'FILE', help: 'config file (default: $MEDIAGATE_CONFIG, else the embedded default)' } } as const;
const JSON_OPTION = { json: { type: 'boolean', help: 'print JSON' } } as const;

/** The configuration a command runs with: --config, else MEDIAGATE_CONFIG, else the embedded default. */
function configFor(values: { config?: string }, env: NodeJS.ProcessEnv = process.env): LoadedConfig {
  return loadConfig(env, values.config ?? env.MEDIAGATE_CONFIG);
}

const keyFields = {
  name: { type: 'string', arg: 'NAME', help: 'a name to tell the key apart in lists and usage' },
  models: { type: 'string', arg: 'a,b', help: 'the models the key may use (default: every model)' },
  expires: { type: 'string', arg: 'ISO-8601', help: 'when the key stops working (default: never)' },
  rpm: { type: 'string', arg: 'N', help: 'requests per minute (0: no limit)' },
  concurrency: { type: 'string', arg: 'N', help: 'requests and tasks at once (0: no limit)' },
  project: { type: 'string', arg: 'NAME', help: 'the project the key belongs to (its price ratio and budget apply)' },
  budget: { type: 'string', arg: 'USD', help: 'what the key may spend per --budget-period' },
  'budget-period': { type: 'string', arg: 'day|week|month', help: 'the calendar window the budget resets by' },
} as const;

const keysCreate = {
  name: 'keys create',
  summary: 'Create an API key (mg-…); the key is printed once.',
  options: {
    ...keyFields,
    name: { ...keyFields.name, required: true },
    credit: { type: 'string', arg: 'USD', help: 'a balance in USD the key spends (default: unlimited)' },
    'allow-duplicate-name': { type: 'boolean', help: 'another active key may already carry NAME' },
    ...JSON_OPTION,
    ...CONFIG_OPTION,
  },
} satisfies CommandSpec;

const keysUpdate = {
  name: 'keys update',
  summary: 'Change a key: only the options given change. --models "*" allows every model again, --expires never removes the expiry.',
  args: ['ID'],
  options: {
    ...keyFields,
    models: { ...keyFields.models, arg: 'a,b|*' },
    expires: { ...keyFields.expires, arg: 'ISO-8601|never' },
    project: { ...keyFields.project, arg: 'NAME|none' },
    budget: { ...keyFields.budget, arg: 'USD|none' },
    credit: { type: 'string', arg: '+USD|-USD', help: 'add to (or take from) the balance, as keys credit does' },
    ...JSON_OPTION,
    ...CONFIG_OPTION,
  },
} satisfies CommandSpec;

const keysList = { name: 'keys list', summary: 'List every key with its limits, balance and status.', options: { ...JSON_OPTION, ...CONFIG_OPTION } } satisfies CommandSpec;
const keysRevoke = { name: 'keys revoke', summary: 'Revoke a key; running instances stop accepting it within 2 s.', args: ['ID'], options: { ...CONFIG_OPTION } } satisfies CommandSpec;
const keysCredit = {
  name: 'keys credit',
  summary: 'Add to (+USD) or take from (-USD) a key\'s balance; a balance never goes below zero.',
  args: ['ID', '+USD|-USD'],
  options: { ...CONFIG_OPTION },
} satisfies CommandSpec;
const keysWebhookSecret = {
  name: 'keys webhook-secret',
  summary: 'Make (or rotate) the key\'s webhook signing secret (whsec_…); printed once.',
  args: ['ID'],
  options: { ...JSON_OPTION, ...CONFIG_OPTION },
} satisfies CommandSpec;

const projectFields = {
  'price-ratio': { type: 'string', arg: 'R', help: 'multiplies every price the project\'s keys pay (1: list price, 0.8: 20% off)' },
  budget: { type: 'string', arg: 'USD', help: 'what the project\'s keys may spend together per --budget-period' },
  'budget-period': keyFields['budget-period'],
} as const;

const projectsCreate = {
  name: 'projects create',
  summary: 'Create a project: a named group of keys with a price ratio and a budget.',
  options: { name: { type: 'string', arg: 'NAME', help: 'the project\'s name (keys join it with --project NAME)', required: true }, ...projectFields, ...JSON_OPTION, ...CONFIG_OPTION },
} satisfies CommandSpec;
const projectsList = { name: 'projects list', summary: 'List projects with their keys, price ratio and spend against budget.', options: { ...JSON_OPTION, ...CONFIG_OPTION } } satisfies CommandSpec;
const projectsUpdate = {
  name: 'projects update',
  summary: 'Change a project (by name or id): only the options given change. --budget none removes the budget, --price-ratio 1 the ratio.',
  args: ['NAME|ID'],
  options: { name: { type: 'string', arg: 'NAME', help: 'a new name' }, ...projectFields, budget: { ...projectFields.budget, arg: 'USD|none' }, ...JSON_OPTION, ...CONFIG_OPTION },
} satisfies CommandSpec;

function projectInput(values: { name?: string; 'price-ratio'?: string; budget?: string; 'budget-period'?: string }): ProjectInput {
  const input: ProjectInput = { ...budgetInput(values) };
  if (values.name !== undefined) input.name = values.name;
  if (values['price-ratio'] !== undefined) input.price_ratio = values['price-ratio'];
  return input;
}

async function projectsCreateCommand(argv: string[]): Promise<void> {
  const { values } = parseCommand(projectsCreate, argv);
  const { config } = configFor(values);
  const project = await withStore(config, (s) =>
    asCommand(async () => {
      const a = adminOn(config, s);
      const made = await a.projects.create(projectInput(values));
      await a.record('project.create', made.id, { name: made.name, price_ratio: made.price_ratio, budget_usd: made.budget_usd, budget_period: made.budget_period });
      return made;
    }),
  );
  if (values.json) return out(JSON.stringify(project));
  out(`Created project ${projectLine(project)}`);
}

async function projectsListCommand(argv: string[]): Promise<void> {
  const { values } = parseCommand(projectsList, argv);
  const { config } = configFor(values);
  const projects = await withStore(config, (s) => adminOn(config, s).projects.list(), { mustExist: true });
  if (values.json) return out(JSON.stringify(projects));
  if (!projects.length) return out('No projects. Create one with: npx mediagate projects create --name NAME');
  for (const p of projects) out(projectLine(p));
}

async function projectsUpdateCommand(argv: string[]): Promise<void> {
  const { values, positionals } = parseCommand(projectsUpdate, argv);
  const { config } = configFor(values);
  const input = projectInput(values);
  if (!Object.keys(input).length) throw new UsageError('projects update: needs at least one of --name, --price-ratio, --budget, --budget-period', projectsUpdate);
  const project = await withStore(
    config,
    (s) =>
      asCommand(async () => {
        const a = adminOn(config, s);
        const p = await a.projects.update(positionals[0], input);
        await a.record('project.update', p.id, { ...input });
        return p;
      }),
    { mustExist: true },
  );
  if (values.json) out(JSON.stringify(project));
  else out(`Updated project ${projectLine(project)}`);
  // Keys carry their project's ratio and budget in the authenticator's cache: running instances drop it.
  return tellInstances(config, 'keys', { project_id: project.id });
}

function keyInput(spec: CommandSpec, values: { name?: string; models?: string; expires?: string; rpm?: string; concurrency?: string; project?: string; budget?: string; 'budget-period'?: string }): KeyInput {
  for (const n of ['rpm', 'concurrency'] as const) wholeNumber(spec, n, values[n]);
  const input: KeyInput = {};
  if (values.name !== undefined) input.name = values.name;
  // --models "" (or "*") on update allows every model again.
  if (values.models !== undefined) input.models = values.models === '' || values.models === '*' ? null : values.models;
  if (values.rpm !== undefined) input.rpm = values.rpm;
  if (values.concurrency !== undefined) input.concurrency = values.concurrency;
  // --expires never (on update) removes the expiry.
  if (values.expires !== undefined) input.expires_at = values.expires === 'never' ? null : values.expires;
  // --project none / --budget none (on update) take the key out of its project / remove its budget.
  if (values.project !== undefined) input.project = values.project === 'none' ? null : values.project;
  Object.assign(input, budgetInput(values));
  return input;
}

/** --budget USD|none and --budget-period as the admin service's budget fields. */
function budgetInput(values: { budget?: string; 'budget-period'?: string }): { budget_usd?: string | null; budget_period?: string } {
  const input: { budget_usd?: string | null; budget_period?: string } = {};
  if (values.budget !== undefined) input.budget_usd = values.budget === 'none' ? null : values.budget;
  if (values['budget-period'] !== undefined) input.budget_period = values['budget-period'];
  return input;
}

/** A signed amount of USD as `keys credit` and `keys update --credit` take it. */
function signedUsd(spec: CommandSpec, amount: string): string {
  if (!/^[+-]\d+(\.\d+)?$/.test(amount)) throw new UsageError(`${spec.name}: the amount must carry its sign, e.g. +10 to add or -2.5 to take away (got "${amount}")`, spec);
  return amount;
}

function creditLine(id: string, key: KeyView): string {
  return `Credit of ${id} is now $${key.credit_usd}${Number(key.held_usd) ? ` ($${key.held_usd} more held by running requests)` : ''}.`;
}

async function keysCreateCommand(argv: string[]): Promise<void> {
  const { values } = parseCommand(keysCreate, argv);
  const { config } = configFor(values);
  const input = keyInput(keysCreate, values);
  if (values.credit !== undefined) input.credit_usd = values.credit;
  const { key, secret } = await withStore(config, (s) =>
    asCommand(async () => {
      const a = adminOn(config, s);
      const made = await a.keys.create(input, { allowDuplicateName: values['allow-duplicate-name'] });
      await a.record('key.create', made.key.id, { name: made.key.name });
      return made;
    }),
  );
  if (values.json) return out(JSON.stringify({ id: key.id, name: key.name, key: secret }));
  out(`Created key ${key.id} (${key.name}). It is shown only this once:`);
  out(`  ${secret}`);
}

async function keysUpdateCommand(argv: string[]): Promise<void> {
  const { values, positionals } = parseCommand(keysUpdate, argv);
  const { config } = configFor(values);
  const id = positionals[0];
  const input = keyInput(keysUpdate, values);
  const credit = values.credit === undefined ? undefined : signedUsd(keysUpdate, values.credit);
  if (!Object.keys(input).length && credit === undefined) {
    throw new UsageError('keys update: needs at least one of --name, --models, --rpm, --concurrency, --expires, --project, --budget, --budget-period, --credit', keysUpdate);
  }
  const key = await withStore(
    config,
    (s) =>
      asCommand(async () => {
        const a = adminOn(config, s);
        let k = Object.keys(input).length ? await a.keys.update(id, input) : await a.keys.get(id);
        if (Object.keys(input).length) await a.record('key.update', id, { ...input });
        if (credit !== undefined) {
          k = await a.keys.credit(id, credit).catch((err: unknown) => {
            if (err instanceof GatewayError && Object.keys(input).length) err.message += ' (the other changes were saved)';
            throw err;
          });
          await a.record('key.credit', id, { usd: credit, balance_usd: k.credit_usd });
        }
        return k;
      }),
    { mustExist: true },
  );
  if (values.json) out(JSON.stringify(key));
  else out(`Updated ${keyLine(key)}`);
  return tellInstances(config, 'keys', { key_id: id });
}

async function keysListCommand(argv: string[]): Promise<void> {
  const { values } = parseCommand(keysList, argv);
  const { config } = configFor(values);
  const keys = await withStore(config, (s) => adminOn(config, s).keys.all(), { mustExist: true });
  if (values.json) {
    return out(
      JSON.stringify(
        keys.map((k) => ({
          id: k.id,
          name: k.name,
          prefix: k.prefix,
          models: k.models,
          rpm: k.rpm,
          concurrency: k.concurrency,
          // Spendable balance and what running requests and tasks hold, apart (USD).
          credit: k.credit_usd === null ? null : Number(k.credit_usd),
          held: Number(k.held_usd),
          // In running instances' credit leases: the key's money, kept in memory (docs/limits.md).
          leased: Number(k.leased_usd),
          // Real costs beyond hold and balance; the key is refused until a top-up pays it.
          owes: Number(k.owes_usd),
          project: k.project,
          // The key's own budget (USD per period) and the current window's spend; null without one.
          budget: k.budget_usd === null ? null : Number(k.budget_usd),
          budget_period: k.budget_period,
          budget_spent: k.budget_spent_usd === null ? null : Number(k.budget_spent_usd),
          budget_held: k.budget_held_usd === null ? null : Number(k.budget_held_usd),
          budget_resets_at: k.budget_resets_at,
          expires_at: k.expires_at,
          revoked: k.status === 'revoked',
          created_at: k.created_at,
        })),
      ),
    );
  }
  if (!keys.length) return out('No keys. Create one with: npx mediagate keys create --name NAME');
  for (const k of keys) out(keyLine(k));
}

async function keysRevokeCommand(argv: string[]): Promise<void> {
  const { values, positionals } = parseCommand(keysRevoke, argv);
  const { config } = configFor(values);
  const id = positionals[0];
  await withStore(
    config,
    (s) =>
      asCommand(async () => {
        const a = adminOn(config, s);
        await a.keys.revoke(id).catch((err: unknown) => {
          // Revoking twice is a mistake in the arguments (status 2), as revoking an unknown id is.
          throw err instanceof GatewayError && err.status === 409 ? new UsageError(`keys revoke: no active key with id ${id}`) : err;
        });
        await a.record('key.revoke', id);
      }),
    { mustExist: true },
  );
  out(`Revoked ${id}.`);
  return tellInstances(config, 'keys', { key_id: id });
}

async function keysWebhookSecretCommand(argv: string[]): Promise<void> {
  const { values, positionals } = parseCommand(keysWebhookSecret, argv);
  const { config } = configFor(values);
  const id = positionals[0];
  const secret = newWebhookSecret();
  const rotated = await withStore(
    config,
    async (s) => {
      const key = await new KeysRepo(s.db).findById(id);
      if (!key || key.revoked_at !== null) throw new UsageError(`keys webhook-secret: no active key with id ${id}`);
      const repo = new WebhookSecretsRepo(s.db);
      const had = !!(await repo.get(id));
      const now = Date.now();
      await repo.rotate(id, secret, now, now + config.webhooks.rotation_grace_s * 1000);
      return had;
    },
    { mustExist: true },
  );
  if (values.json) return out(JSON.stringify({ key_id: id, secret, rotated }));
  out(secret);
  out(
    rotated
      ? `Rotated. Webhooks are signed with this secret and, for ${config.webhooks.rotation_grace_s} s more, with the previous one too. It is not shown again.`
      : 'Webhooks of this key are signed with this secret (Standard Webhooks). It is not shown again.',
  );
}

async function keysCreditCommand(argv: string[]): Promise<void> {
  const { values, positionals } = parseCommand(keysCredit, argv);
  const [id, amount] = positionals;
  if (!/^[+-]?\d+(\.\d+)?$/.test(amount)) throw new UsageError(`keys credit: the amount must be USD, e.g. +10 or -2.5 (got "${amount}")`, keysCredit);
  const { config } = configFor(values);
  const key = await withStore(
    config,
    (s) =>
      asCommand(async () => {
        const a = adminOn(config, s);
        const k = await a.keys.credit(id, amount);
        await a.record('key.credit', id, { usd: amount, balance_usd: k.credit_usd });
        return k;
      }),
    { mustExist: true },
  );
  out(creditLine(id, key));
}

const adminCreate = {
  name: 'admin create',
  summary: 'Create an admin token (mga-…) for the admin API and console; printed once.',
  options: { name: { type: 'string', arg: 'NAME', help: 'who holds the token', required: true }, ...JSON_OPTION, ...CONFIG_OPTION },
} satisfies CommandSpec;
const adminList = { name: 'admin list', summary: 'List the admin tokens.', options: { ...JSON_OPTION, ...CONFIG_OPTION } } satisfies CommandSpec;
const adminRevoke = { name: 'admin revoke', summary: 'Revoke an admin token (by id or name); its console sessions end at once.', args: ['ID|NAME'], options: { ...CONFIG_OPTION } } satisfies CommandSpec;

async function adminCreateCommand(argv: string[]): Promise<void> {
  const { values } = parseCommand(adminCreate, argv);
  const { config } = configFor(values);
  const name = values.name!;
  const { token, secret } = await withStore(config, (s) =>
    asCommand(async () => {
      const a = adminOn(config, s);
      const made = await a.access.create(name);
      await a.record('admin_token.create', made.token.id, { name: made.token.name });
      return made;
    }),
  );
  if (values.json) return out(JSON.stringify({ id: token.id, name: token.name, token: secret }));
  out(`Created admin token ${token.id} (${token.name}). It is shown only this once:`);
  out(`  ${secret}`);
  if (!config.admin.enabled) out('The admin API and console are off: start the server with MEDIAGATE_ADMIN=1, or set admin.enabled: true in the config file.');
}

async function adminListCommand(argv: string[]): Promise<void> {
  const { values } = parseCommand(adminList, argv);
  const { config } = configFor(values);
  const tokens = await withStore(config, (s) => adminOn(config, s).access.list(), { mustExist: true });
  if (values.json) return out(JSON.stringify(tokens));
  if (!tokens.length) return out('No admin tokens. Create one with: npx mediagate admin create --name NAME');
  for (const t of tokens) out(`${t.id}  ${t.name}  ${t.prefix}  ${t.revoked_at ? 'revoked' : 'active'}  created=${t.created_at}${t.last_used_at ? '  last_used=' + t.last_used_at : ''}`);
}

async function adminRevokeCommand(argv: string[]): Promise<void> {
  const { values, positionals } = parseCommand(adminRevoke, argv);
  const { config } = configFor(values);
  const id = positionals[0];
  const t = await withStore(
    config,
    (s) =>
      asCommand(async () => {
        const a = adminOn(config, s);
        const r = await a.access.revoke(id);
        await a.record('admin_token.revoke', r.id, { name: r.name });
        return r;
      }),
    { mustExist: true },
  );
  out(`Revoked admin token ${t.id} (${t.name}); its console sessions ended.`);
}

/** With redis.url set, tells running instances at once; without, they notice by themselves (key cache: 2 s). */
async function tellInstances(config: Config, event: 'keys' | 'reload' | 'channels', extra: Record<string, string> = {}): Promise<void> {
  const { url, key_prefix } = config.redis;
  if (!url) return;
  try {
    const n = await publishOnce({ url, key_prefix }, event, extra);
    out(event === 'keys' ? `Told ${n} running instance(s) to drop their cached keys.` : event === 'channels' ? `Told ${n} running instance(s) to re-read the channels.` : `Reload sent to ${n} running instance(s).`);
  } catch (err) {
    const fallback = event === 'keys' ? 'running instances stop accepting the key within 2 s anyway' : event === 'channels' ? 'running instances re-read the channels within a second anyway' : 'send SIGHUP to each instance instead';
    process.stderr.write(`mediagate: Redis unreachable (${(err as Error).message}); ${fallback}\n`);
    if (event === 'reload') throw new CommandFailed();
  }
}

class CommandFailed extends Error {}

/** A command that cannot do what was asked (status 1), with a message saying why; no usage text. */
class CommandError extends Error {}

const channelFields = {
  file: { type: 'string', arg: 'FILE', help: 'a YAML or JSON file holding the channel\'s fields, as one entry of a config file\'s channels (${VAR} filled from the environment); the options below win over it' },
  type: { type: 'string', arg: 'TYPE', help: 'provider type (npx mediagate providers list)' },
  'base-url': { type: 'string', arg: 'URL', help: 'the provider\'s base URL' },
  'api-key-env': { type: 'string', arg: 'VAR', help: 'the environment variable holding the API key (never the key itself on the command line)' },
  'api-secret-env': { type: 'string', arg: 'VAR', help: 'the environment variable holding the second credential (Kling: the secret key)' },
  models: { type: 'string', arg: 'a,b', help: 'the model ids it serves (each declared under models in the config)' },
  map: { type: 'string', arg: 'model=upstream,…', help: 'upstream model names, per model id' },
  priority: { type: 'string', arg: 'N', help: 'lower is tried first (default 0)' },
  weight: { type: 'string', arg: 'N', help: 'share among channels of one priority (default 1)' },
  'test-interval': { type: 'string', arg: 'S', help: 'seconds between scheduled tests of this channel (nothing billable); 0 = none; default relay.health.test_interval_s' },
} as const;

const channelsList = { name: 'channels list', summary: 'List the channels: the config file\'s (read-only) and those added at runtime.', options: { ...JSON_OPTION, ...CONFIG_OPTION } } satisfies CommandSpec;
const channelsAdd = {
  name: 'channels add',
  summary: 'Add a channel at runtime; running instances serve it within 2 s. Credentials are sealed with $MEDIAGATE_SECRET_KEY.',
  args: ['NAME'],
  options: { ...channelFields, disabled: { type: 'boolean', help: 'add it switched off' }, ...JSON_OPTION, ...CONFIG_OPTION },
} satisfies CommandSpec;
const channelsUpdate = {
  name: 'channels update',
  summary: 'Change a channel added at runtime: only the options given change.',
  args: ['NAME'],
  options: { ...channelFields, ...JSON_OPTION, ...CONFIG_OPTION },
} satisfies CommandSpec;
const channelsEnable = { name: 'channels enable', summary: 'Put a channel (also one of the config file) back into rotation on every instance.', args: ['NAME'], options: { ...CONFIG_OPTION } } satisfies CommandSpec;
const channelsDisable = { name: 'channels disable', summary: 'Take a channel (also one of the config file) out of rotation on every instance; its open tasks finish.', args: ['NAME'], options: { ...CONFIG_OPTION } } satisfies CommandSpec;
const channelsRemove = { name: 'channels remove', summary: 'Remove a channel added at runtime; its open tasks still finish through it.', args: ['NAME'], options: { ...CONFIG_OPTION } } satisfies CommandSpec;

type ChannelValues = { [K in keyof typeof channelFields]?: string };

/** The channel fields the options give (a --file's first, the options over them). */
function channelInput(spec: CommandSpec, values: ChannelValues): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  if (values.file) {
    let parsed: unknown;
    try {
      parsed = parseYaml(readFileSync(values.file, 'utf8'));
    } catch (err) {
      throw new UsageError(`${spec.name}: --file ${values.file}: ${(err as Error).message.split('\n')[0]}`, spec);
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new UsageError(`${spec.name}: --file ${values.file}: must hold one channel's fields as a mapping`, spec);
    Object.assign(input, interpolate(parsed, process.env, '', values.file));
  }
  if (values.type !== undefined) input.type = values.type;
  if (values['base-url'] !== undefined) input.base_url = values['base-url'];
  for (const [option, field] of [['api-key-env', 'api_key'], ['api-secret-env', 'api_secret']] as const) {
    const name = values[option];
    if (name === undefined) continue;
    const v = process.env[name];
    if (!v) throw new UsageError(`${spec.name}: --${option}: the environment variable ${name} is not set`, spec);
    input[field] = v;
  }
  if (values.models !== undefined) input.models = values.models.split(',').map((m) => m.trim()).filter(Boolean);
  if (values.map !== undefined) {
    input.model_map = Object.fromEntries(
      values.map.split(',').filter(Boolean).map((pair) => {
        const i = pair.indexOf('=');
        if (i <= 0 || i === pair.length - 1) throw new UsageError(`${spec.name}: --map: each entry is model=upstream, got "${pair}"`, spec);
        return [pair.slice(0, i).trim(), pair.slice(i + 1).trim()];
      }),
    );
  }
  for (const n of ['priority', 'weight'] as const) {
    const v = values[n];
    if (v === undefined) continue;
    if (!/^-?\d+$/.test(v)) throw new UsageError(`${spec.name}: --${n} must be a whole number, got "${v}"`, spec);
    input[n] = Number(v);
  }
  const interval = values['test-interval'];
  if (interval !== undefined) {
    if (!/^\d{1,5}$/.test(interval) || Number(interval) > 86400) throw new UsageError(`${spec.name}: --test-interval must be whole seconds from 0 (none) to 86400, got "${interval}"`, spec);
    input.test_interval_s = Number(interval);
  }
  return input;
}

/** The channel editor over the command's store; a malformed $MEDIAGATE_SECRET_KEY is a CommandError. */
function channelEditorOn(config: Config, s: Store) {
  let secretBox: SecretBox;
  try {
    secretBox = SecretBox.fromEnv(process.env);
  } catch (err) {
    throw new CommandError((err as Error).message);
  }
  return createChannelEditor({ config, store: s, secretBox });
}

function channelLine(c: { name: string; source: string; type: string; enabled: boolean; priority: number; weight: number; models: string[]; api_key?: string }): string {
  return `${c.name}  ${c.source}  ${c.type}  ${c.enabled ? 'enabled' : 'disabled'}  priority=${c.priority}  weight=${c.weight}  models=${c.models.join(',')}${c.api_key ? '  api_key=set' : ''}`;
}

async function channelsListCommand(argv: string[]): Promise<void> {
  const { values } = parseCommand(channelsList, argv);
  const { config } = configFor(values);
  const rows = await withStore(config, (s) => new ChannelsRepo(s.db).all(), { mustExist: true });
  const overrides = new Map(rows.filter((r) => r.kind === 'override').map((r) => [r.name, r.enabled === 1]));
  const list = [
    ...config.channels.map((c) => ({ name: c.name, source: 'config', type: c.type, enabled: overrides.get(c.name) ?? c.enabled, priority: c.priority, weight: c.weight, models: c.models, ...(c.api_key ? { api_key: 'set' } : {}) })),
    ...rows
      .filter((r) => r.kind === 'stored' && r.deleted_at === 0)
      .map((r) => {
        const body = JSON.parse(r.body) as ChannelBody;
        return { name: r.name, source: 'api', type: body.type, enabled: r.enabled === 1, priority: body.priority, weight: body.weight, models: body.models, ...(r.credentials ? { api_key: 'set' } : {}) };
      }),
  ];
  if (values.json) return out(JSON.stringify(list));
  if (!list.length) return out('No channels.');
  for (const c of list) out(channelLine(c));
}

async function channelsAddCommand(argv: string[]): Promise<void> {
  const { values, positionals } = parseCommand(channelsAdd, argv);
  const { config } = configFor(values);
  const input = { ...channelInput(channelsAdd, values), name: positionals[0], ...(values.disabled ? { enabled: false } : {}) };
  const channel = await withStore(
    config,
    (s) =>
      asCommand(async () => {
        const made = await channelEditorOn(config, s).create(input);
        await adminOn(config, s).record('channel.create', made.name, auditDetail(input));
        return made;
      }),
    { mustExist: true },
  );
  const view = { name: channel.name, source: 'api', type: channel.type, enabled: channel.enabled, priority: channel.priority, weight: channel.weight, models: channel.models, ...(channel.api_key ? { api_key: 'set' } : {}) };
  out(values.json ? JSON.stringify(view) : `Added ${channelLine(view)}`);
  await tellInstances(config, 'channels', { name: channel.name });
}

async function channelsUpdateCommand(argv: string[]): Promise<void> {
  const { values, positionals } = parseCommand(channelsUpdate, argv);
  const { config } = configFor(values);
  const input = channelInput(channelsUpdate, values);
  if (!Object.keys(input).length) throw new UsageError(`channels update: needs at least one of ${Object.keys(channelFields).map((o) => `--${o}`).join(', ')}`, channelsUpdate);
  const name = positionals[0];
  const channel = await withStore(
    config,
    (s) =>
      asCommand(async () => {
        const changed = await channelEditorOn(config, s).update(name, input);
        await adminOn(config, s).record('channel.update', name, auditDetail(input));
        return changed;
      }),
    { mustExist: true },
  );
  const view = { name: channel.name, source: 'api', type: channel.type, enabled: channel.enabled, priority: channel.priority, weight: channel.weight, models: channel.models, ...(channel.api_key ? { api_key: 'set' } : {}) };
  out(values.json ? JSON.stringify(view) : `Updated ${channelLine(view)}`);
  await tellInstances(config, 'channels', { name });
}

function channelSwitchCommand(spec: typeof channelsEnable | typeof channelsDisable | typeof channelsRemove, what: 'enable' | 'disable' | 'remove') {
  return async (argv: string[]): Promise<void> => {
    const { values, positionals } = parseCommand(spec, argv);
    const { config } = configFor(values);
    const name = positionals[0];
    let credentials = 'none';
    await withStore(
      config,
      (s) =>
        asCommand(async () => {
          const editor = channelEditorOn(config, s);
          if (what === 'remove') credentials = (await editor.remove(name)).credentials;
          else await editor.update(name, { enabled: what === 'enable' });
          await adminOn(config, s).record(`channel.${what}`, name, what === 'remove' ? { credentials } : undefined);
        }),
      { mustExist: true },
    );
    const wiped = credentials === 'wiped' ? ' Its credentials are wiped.' : credentials === 'kept_for_tasks' ? ' Its credentials are kept, sealed, until its tasks no longer need them.' : '';
    out(what === 'remove' ? `Removed channel ${name}; its open tasks still finish through it.${wiped}` : `Channel ${name} ${what}d.`);
    await tellInstances(config, 'channels', { name });
  };
}

const usageSpec = {
  name: 'usage',
  summary: 'Requests, units and cost per key and model, from the usage ledger.',
  options: {
    key: { type: 'string', arg: 'ID', help: 'one key only' },
    since: { type: 'string', arg: 'ISO-8601', help: 'only what happened from this time on' },
    rows: { type: 'string', arg: 'N', help: 'the N newest requests, each with what it was billed by, instead of totals' },
    ...JSON_OPTION,
    ...CONFIG_OPTION,
  },
} satisfies CommandSpec;

/** `usage --rows N`: single ledger rows, newest first, with the price rule each was billed by. */
async function usageRows(config: Config, values: { key?: string; json?: boolean }, limit: number, sinceMs: number | undefined): Promise<void> {
  if (limit < 1 || limit > 1000) throw new UsageError('usage: --rows must be from 1 to 1000', usageSpec);
  const q: Record<string, string> = { limit: String(limit) };
  if (values.key !== undefined) q.key = values.key;
  if (sinceMs !== undefined) q.from = new Date(sinceMs).toISOString();
  const page = await withStore(config, (s) => new UsageAdmin(new UsageReportsRepo(s.db), new UsageRepo(s.db)).page(q), { mustExist: true });
  if (values.json) return out(JSON.stringify({ rows: page.data }));
  if (!page.data.length) return out('No usage recorded.');
  const table = [['TIME', 'KEY', 'MODEL', 'ENDPOINT', 'STATUS', 'COST', 'BILLED BY'], ...page.data.map((r) => [r.created_at, r.key_id, r.model || '-', r.endpoint, String(r.status), `$${r.cost_usd}`, r.billed_by || '-'])];
  const widths = table[0].map((_, i) => Math.max(...table.map((row) => row[i].length)));
  for (const row of table) out(row.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd());
}

async function usageCommand(argv: string[]): Promise<void> {
  const { values } = parseCommand(usageSpec, argv);
  const { config } = configFor(values);
  let sinceMs: number | undefined;
  if (values.since !== undefined) {
    sinceMs = Date.parse(values.since);
    if (!Number.isFinite(sinceMs)) throw new UsageError(`usage: --since must be an ISO-8601 time, got "${values.since}"`, usageSpec);
  }
  const rowCount = wholeNumber(usageSpec, 'rows', values.rows);
  if (rowCount !== undefined) return usageRows(config, values, rowCount, sinceMs);
  const { rows, names } = await withStore(
    config,
    async (s) => ({
      rows: await new UsageAdmin(new UsageReportsRepo(s.db), new UsageRepo(s.db)).totals({ keyId: values.key, sinceMs }),
      names: new Map((await new KeysRepo(s.db).list()).map((k) => [k.id, k.name])),
    }),
    { mustExist: true },
  );
  const total = rows.reduce(
    (t, r) => ({
      requests: t.requests + r.requests,
      input_units: t.input_units + r.input_units,
      output_units: t.output_units + r.output_units,
      cost_micros: t.cost_micros + r.cost_micros,
      overage_micros: t.overage_micros + r.overage_micros,
    }),
    { requests: 0, input_units: 0, output_units: 0, cost_micros: 0, overage_micros: 0 },
  );
  const usd = (m: number) => m / 1_000_000;
  if (values.json) {
    return out(
      JSON.stringify({
        key: values.key ?? null,
        since: sinceMs === undefined ? null : new Date(sinceMs).toISOString(),
        rows: rows.map((r) => ({ ...r, key_name: names.get(r.key_id) ?? null, cost_usd: usd(r.cost_micros), overage_usd: usd(r.overage_micros) })),
        total: { ...total, cost_usd: usd(total.cost_micros), overage_usd: usd(total.overage_micros) },
      }),
    );
  }
  if (!rows.length) return out('No usage recorded' + (values.key ? ` for ${values.key}` : '') + (values.since ? ` since ${values.since}` : '') + '.');
  // OVERAGE: the part of COST that neither the holds nor the balance covered (what the key owes or owed).
  const table: string[][] = [['KEY', 'NAME', 'MODEL', 'REQUESTS', 'INPUT', 'OUTPUT', 'COST', 'OVERAGE']];
  const line = (key: string, name: string, model: string, r: Omit<UsageTotal, 'key_id' | 'model'>) => [
    key,
    name,
    model,
    String(r.requests),
    String(r.input_units),
    String(r.output_units),
    microsToUsd(r.cost_micros),
    microsToUsd(r.overage_micros),
  ];
  // Requests refused before a model was read (key rate limits) have no model.
  for (const r of rows) table.push(line(r.key_id, names.get(r.key_id) ?? '-', r.model || '-', r));
  table.push(line('TOTAL', '', '', total));
  const widths = table[0].map((_, i) => Math.max(...table.map((row) => row[i].length)));
  for (const row of table) out(row.map((c, i) => (i >= 3 ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join('  ').trimEnd());
}

async function serve(config: Config, source: string, reload: () => Config): Promise<void> {
  const file = sqliteFile(config);
  const lock = file ? acquireInstanceLock(file) : null;
  let services;
  try {
    services = await createServices(config, { simulatorStateFile: file ? `${file}.simulator.json` : undefined });
  } catch (err) {
    lock?.release();
    throw err;
  }
  // The cluster starts after the apps; an admin reload before then finds none and is refused.
  let cluster: Awaited<ReturnType<typeof startCluster>> | null = null;
  const adminOptions = {
    reload: async () => (cluster ? await cluster.reloadAndTell('admin API') : { ok: false, error: 'the instance is still starting' }),
    // Other instances drop their cached keys at once (without Redis: within their 2 s cache).
    keysChanged: async () => {
      if (config.redis.url) await publishOnce({ url: config.redis.url, key_prefix: config.redis.key_prefix }, 'keys').catch(() => undefined);
    },
    // The others re-read the stored channels at once (without Redis: within a second).
    channelsChanged: async () => {
      if (config.redis.url) await publishOnce({ url: config.redis.url, key_prefix: config.redis.key_prefix }, 'channels').catch(() => undefined);
    },
  };
  const separateAdmin = config.admin.enabled && Boolean(config.admin.listen);
  const app = buildApp(services, { admin: adminOptions, surface: separateAdmin ? 'public' : undefined });
  const adminApp = separateAdmin ? buildApp(services, { admin: adminOptions, surface: 'admin' }) : null;
  const candidate = generateApiKey();
  const created = await services.keys.createFirst({ name: 'default', keyHash: hashApiKey(candidate), keyPrefix: displayPrefix(candidate) }, services.store.dialect);
  const firstKey = created ? candidate : null;
  // SIGHUP: re-read the config file, swap the catalog, tell the other instances (docs/deployment.md).
  const started = await startCluster(services, { load: reload, log: app.log });
  cluster = started;
  process.on('SIGHUP', () => void started.reloadAndTell('SIGHUP'));
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    out(`mediagate: ${signal}: shutting down (no new connections, finishing in-flight requests)`);
    const timer = setTimeout(() => {
      out('mediagate: shutdown grace elapsed; exiting');
      process.exit(1);
    }, config.server.shutdown_grace_s * 1000);
    timer.unref();
    // A proxy's keep-alive connection that was busy when closing began would stay open after its
    // last response (until the proxy drops it), holding the exit back: close each once it is idle.
    const idleSweep = setInterval(() => app.server.closeIdleConnections(), 250);
    idleSweep.unref();
    try {
      await Promise.all([app.close(), adminApp?.close()]);
      clearInterval(idleSweep);
      await started.close();
      await services.close();
    } finally {
      process.exit(0);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  await app.ready();
  // The banner below is the start-up message (docs/deployment.md, "Output").
  const address = await app.listen({ host: config.server.host, port: config.server.port });
  out(`mediagate listening on ${address} (config: ${source}; database: ${services.store.dialect}${services.simulator ? `; simulator: ${services.simulator.url}` : ''})`);
  if (adminApp && config.admin.listen) {
    const i = config.admin.listen.lastIndexOf(':');
    const adminAddress = await adminApp.listen({ host: config.admin.listen.slice(0, i).replace(/^\[|\]$/g, ''), port: Number(config.admin.listen.slice(i + 1)) });
    out(`mediagate admin API and console on ${adminAddress}/console`);
  } else if (config.admin.enabled) out(`mediagate admin API and console on ${address}/console`);
  if (firstKey) {
    const base = address.replace('://0.0.0.0', '://127.0.0.1').replace('://[::]', '://127.0.0.1');
    out('No key existed, so a key named "default" was created. It is shown only this once:');
    out(`  ${firstKey}`);
    // The two variables every example in the docs uses (README, "Quick start").
    out("Try it (the docs' examples use these two variables):");
    out(`  export MEDIAGATE_URL=${base} MEDIAGATE_KEY=${firstKey}`);
    out('  curl -s $MEDIAGATE_URL/v1/models -H "Authorization: Bearer $MEDIAGATE_KEY"');
  }
}

const serveSpec = {
  name: 'serve',
  summary: 'Serve the gateway (the default command). The config comes from --config, else $MEDIAGATE_CONFIG, else the embedded default.',
  options: {
    port: { type: 'string', arg: 'N', help: 'listen on this port (wins over server.port and $PORT; 0: any free port)' },
    host: { type: 'string', arg: 'HOST', help: 'listen on this address (wins over server.host and $HOST)' },
    ...CONFIG_OPTION,
  },
} satisfies CommandSpec;

async function serveCommand(argv: string[]): Promise<void> {
  const { values } = parseCommand(serveSpec, argv);
  wholeNumber(serveSpec, 'port', values.port);
  // --port and --host act as PORT and HOST do, on a reload (SIGHUP) too.
  const env = { ...process.env, ...(values.port !== undefined ? { PORT: values.port } : {}), ...(values.host !== undefined ? { HOST: values.host } : {}) };
  const { config, source } = configFor(values, env);
  await serve(config, source, () => configFor(values, env).config);
}

const simulateSpec = {
  name: 'simulate',
  summary: 'Run the provider simulator alone (what the embedded default runs in-process).',
  options: {
    port: { type: 'string', arg: 'N', help: 'listen on this port (default 9090)' },
    host: { type: 'string', arg: 'HOST', help: 'listen on this address (default 127.0.0.1)' },
    'video-seconds': { type: 'string', arg: 'S', help: 'how long a simulated video takes (default 10)' },
  },
} satisfies CommandSpec;

async function simulate(argv: string[]): Promise<void> {
  const { values } = parseCommand(simulateSpec, argv);
  const port = wholeNumber(simulateSpec, 'port', values.port ?? '9090');
  const videoSeconds = Number(values['video-seconds'] ?? '10');
  if (!Number.isFinite(videoSeconds) || videoSeconds < 0) throw new UsageError('simulate: --video-seconds must be a non-negative number', simulateSpec);
  const { startSimulator } = await import('./simulator/server.js');
  const sim = await startSimulator({ port, host: values.host ?? '127.0.0.1', videoSeconds });
  out(`mediagate simulator listening on ${sim.url}`);
  const stop = () => void sim.close().then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

const reloadSpec = {
  name: 'reload',
  summary: 'Every running instance re-reads its config file (needs redis.url; without Redis: kill -HUP <pid>).',
  options: { ...CONFIG_OPTION },
} satisfies CommandSpec;

async function reloadCommand(argv: string[]): Promise<void> {
  const { values } = parseCommand(reloadSpec, argv);
  const { config } = configFor(values);
  if (!config.redis.url) throw new CommandError('reload needs redis.url to reach the instances; without Redis, send SIGHUP to each (kill -HUP <pid>)');
  await tellInstances(config, 'reload');
}

const migrateSpec = { name: 'migrate', summary: 'Apply the database migrations and exit.', options: { ...CONFIG_OPTION } } satisfies CommandSpec;

async function migrateCommand(argv: string[]): Promise<void> {
  const { values } = parseCommand(migrateSpec, argv);
  const { config } = configFor(values);
  await withStore(config, async () => undefined);
  out(`Migrations applied to ${config.database.url.startsWith('sqlite:') ? config.database.url : 'PostgreSQL'}.`);
}

const versionSpec = { name: 'version', summary: 'Print the version (also: --version).' } satisfies CommandSpec;

/** package.json's version; this file runs as src/main.ts (tests) or dist/main.js, both one level down. */
function packageVersion(): string {
  return (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}

const providersListSpec = {
  name: 'providers list',
  summary: 'Every provider type, built-in or loaded from providers.dir, with its capabilities and models.',
  options: { ...JSON_OPTION, ...CONFIG_OPTION },
} satisfies CommandSpec;

const providersCheckSpec = {
  name: 'providers check',
  summary: 'Validate a provider manifest and print the upstream requests it would send (calls nothing).',
  args: ['FILE'],
  options: { ...JSON_OPTION },
} satisfies CommandSpec;

async function providersListCommand(argv: string[]): Promise<void> {
  const { values } = parseCommand(providersListSpec, argv);
  if ((await import('./cli-providers.js')).listProviders(values.json === true, values.config) !== 0) throw new CommandFailed();
}

async function providersCheckCommand(argv: string[]): Promise<void> {
  const { values, positionals } = parseCommand(providersCheckSpec, argv);
  if ((await (await import('./cli-providers.js')).checkManifest(positionals[0], values.json === true)) !== 0) throw new CommandFailed();
}

interface Command {
  spec: CommandSpec;
  /** Runs the command; true when it keeps running (a server) and the process must not exit. */
  run(argv: string[]): Promise<void | 'running'>;
}

/** Every command, in the order `mediagate --help` lists them. */
export const COMMANDS: Command[] = [
  { spec: serveSpec, run: async (a) => (await serveCommand(a), 'running') },
  { spec: keysCreate, run: keysCreateCommand },
  { spec: keysList, run: keysListCommand },
  { spec: keysUpdate, run: keysUpdateCommand },
  { spec: keysCredit, run: keysCreditCommand },
  { spec: keysRevoke, run: keysRevokeCommand },
  { spec: keysWebhookSecret, run: keysWebhookSecretCommand },
  { spec: projectsCreate, run: projectsCreateCommand },
  { spec: projectsList, run: projectsListCommand },
  { spec: projectsUpdate, run: projectsUpdateCommand },
  { spec: adminCreate, run: adminCreateCommand },
  { spec: adminList, run: adminListCommand },
  { spec: adminRevoke, run: adminRevokeCommand },
  { spec: channelsList, run: channelsListCommand },
  { spec: channelsAdd, run: channelsAddCommand },
  { spec: channelsUpdate, run: channelsUpdateCommand },
  { spec: channelsEnable, run: channelSwitchCommand(channelsEnable, 'enable') },
  { spec: channelsDisable, run: channelSwitchCommand(channelsDisable, 'disable') },
  { spec: channelsRemove, run: channelSwitchCommand(channelsRemove, 'remove') },
  { spec: usageSpec, run: usageCommand },
  { spec: reloadSpec, run: reloadCommand },
  { spec: providersListSpec, run: providersListCommand },
  { spec: providersCheckSpec, run: providersCheckCommand },
  { spec: migrateSpec, run: migrateCommand },
  { spec: simulateSpec, run: async (a) => (await simulate(a), 'running') },
  { spec: versionSpec, run: async (a) => (parseCommand(versionSpec, a), out(`mediagate ${packageVersion()}`)) },
];

function overview(): string {
  const lines = ['mediagate — a gateway to generative models', '', 'Usage:'];
  for (const { spec } of COMMANDS) lines.push(`  ${usageLine(spec)}`, `      ${spec.summary}`);
  lines.push('', 'Run `npx mediagate <command> --help` for one command (e.g. `npx mediagate keys create --help`).');
  return lines.join('\n') + '\n';
}

/** The commands of a group (`keys`, `admin`…): the words after the group name. */
function groupOf(word: string): Command[] {
  return COMMANDS.filter((c) => c.spec.name.startsWith(`${word} `));
}

function groupHelp(word: string): string {
  const lines = [`Usage: mediagate ${word} <command>`, '', 'Commands:'];
  for (const { spec } of groupOf(word)) lines.push(`  ${usageLine(spec)}`, `      ${spec.summary}`);
  return lines.join('\n') + '\n';
}

/** The command the arguments name and the arguments left for it; a group without a known command is a UsageError. */
function findCommand(argv: string[]): { command: Command; rest: string[] } | { help: string } {
  const [first = 'serve', second] = argv;
  // `mediagate --port 8080` and `mediagate --config f.yaml` serve, as `mediagate` alone does.
  if (first.startsWith('-') && !['-h', '--help', '-v', '--version'].includes(first)) return { command: COMMANDS[0], rest: argv };
  if (first === 'help' || first === '--help' || first === '-h') {
    const topic = argv[1];
    if (topic === undefined) return { help: overview() };
    return findCommand([...argv.slice(1), '--help']);
  }
  if (first === '--version' || first === '-v') return { command: COMMANDS.find((c) => c.spec === versionSpec)!, rest: argv.slice(1) };
  const group = groupOf(first);
  if (group.length) {
    const sub = second === undefined ? undefined : group.find((c) => c.spec.name === `${first} ${second}`);
    if (sub) return { command: sub, rest: argv.slice(2) };
    if (second === undefined) throw new UsageError(`${first}: needs a command: ${group.map((c) => c.spec.name.slice(first.length + 1)).join(', ')} (see npx mediagate ${first} --help)`);
    if (second === '--help' || second === '-h') return { help: groupHelp(first) };
    throw new UsageError(`unknown ${first} command "${second}": one of ${group.map((c) => c.spec.name.slice(first.length + 1)).join(', ')} (see npx mediagate ${first} --help)`);
  }
  const command = COMMANDS.find((c) => c.spec.name === first);
  if (!command) throw new UsageError(`unknown command "${first}": one of ${[...new Set(COMMANDS.map((c) => c.spec.name.split(' ')[0]))].join(', ')} (see npx mediagate --help)`);
  return { command, rest: argv.slice(1) };
}

export async function main(argv: string[]): Promise<number> {
  try {
    const found = findCommand(argv);
    if ('help' in found) {
      process.stdout.write(found.help);
      return 0;
    }
    const { command, rest } = found;
    if (wantsHelp(rest)) {
      process.stdout.write(helpText(command.spec));
      return 0;
    }
    return (await command.run(rest)) === 'running' ? -1 : 0;
  } catch (err) {
    if (err instanceof ConfigError || err instanceof GatewayConfigError) {
      fail(`invalid configuration: ${err.message}`);
      return 2;
    }
    if (err instanceof CommandFailed) return 1;
    if (err instanceof CommandError || err instanceof InstanceLockError) {
      fail(err.message);
      return 1;
    }
    if (err instanceof UsageError) {
      fail(err.message, err.command ? `usage: ${usageLine(err.command)}\n` : '');
      return 2;
    }
    fail((err as Error).message);
    return 1;
  }
}

// Run when executed directly (not when imported by tests).
if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  void main(process.argv.slice(2)).then((code) => {
    if (code >= 0) process.exit(code);
  });
}

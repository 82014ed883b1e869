import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadConfig, type LoadedConfig } from '../config-file/loader.js';
import { UsageError } from './args.js';
import type { Config } from '../config/schema.js';
import { openStore, parseDatabaseUrl } from '../store/db.js';
import { userInfo } from 'node:os';
import { KeysRepo } from '../store/repos/keys.js';
import { AuditRepo } from '../store/repos/audit.js';
import type { Store } from '../store/db.js';
import { GatewayError } from '../http/errors.js';
import { escapeUnsafe } from '../http/names.js';
import { Audit } from '../admin/audit.js';
import { createAdminAccess, createKeyAdmin, createProjectAdmin } from '../admin/index.js';
import type { BudgetView } from '../admin/budget-fields.js';
import { ReservationsRepo } from '../store/repos/reservations.js';
import { UsageRepo } from '../store/repos/usage.js';
import { publishOnce } from '../cluster/bus.js';

// What every CLI command shares: printing, the store it opens, the admin services on it, options
// and the errors that set the exit status.

// Every line the CLI prints may hold names from the database (stored before names were checked,
// too): their control characters are written out as \uXXXX, so a name can never move the cursor,
// recolour the terminal, fake another line or reverse the text around it. JSON stays valid JSON.
export function out(line: string): void {
  process.stdout.write(escapeUnsafe(line) + '\n');
}

/** An error line on stderr; a message of several lines (a YAML error with its caret) keeps its line breaks. */
export function fail(message: string, tail = ''): void {
  process.stderr.write(`mediagate: ${message.split('\n').map(escapeUnsafe).join('\n')}\n${tail}`);
}

export function usdToMicros(usd: number): number {
  return Math.round(usd * 1_000_000);
}

export function microsToUsd(m: number | null): string {
  return m === null ? 'unlimited' : `$${(m / 1_000_000).toFixed(6)}`;
}

/** The SQLite file of a config, or null for PostgreSQL and in-memory databases. */
export function sqliteFile(config: Config): string | null {
  const { dialect, target } = parseDatabaseUrl(config.database.url);
  return dialect === 'sqlite' && target !== ':memory:' ? target : null;
}

/**
 * Opens the store for one command. Commands that only read or change existing rows pass
 * `mustExist`: run from the wrong directory, they would otherwise create (and report on) a fresh,
 * empty database instead of the one the server uses.
 */
export async function withStore<T>(config: Config, fn: (store: Awaited<ReturnType<typeof openStore>>) => Promise<T>, opts: { mustExist?: boolean } = {}): Promise<T> {
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
export function adminOn(config: Config, s: Store) {
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
export async function asCommand<T>(work: () => Promise<T>): Promise<T> {
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

/** `  budget=$spent/$budget per period (resets …)`, or nothing without a budget. */
export function budgetText(v: BudgetView): string {
  if (v.budget_usd === null) return '';
  const short = (usd: string | null) => `$${(usd ?? '0').replace(/(\.\d\d\d*?)0+$/, '$1')}`;
  const held = Number(v.budget_held_usd) ? ` +${short(v.budget_held_usd)} held` : '';
  return `  budget=${short(v.budget_spent_usd)}${held} of ${short(v.budget_usd)}/${v.budget_period} (resets ${v.budget_resets_at})`;
}

/** --config FILE: every command that reads the configuration takes it (it wins over MEDIAGATE_CONFIG). */
export const CONFIG_OPTION = { config: { type: 'string', arg: 'FILE', help: 'config file (default: $MEDIAGATE_CONFIG, else the embedded default)' } } as const;
export const JSON_OPTION = { json: { type: 'boolean', help: 'print JSON' } } as const;

/** The configuration a command runs with: --config, else MEDIAGATE_CONFIG, else the embedded default. */
export function configFor(values: { config?: string }, env: NodeJS.ProcessEnv = process.env): LoadedConfig {
  return loadConfig(env, values.config ?? env.MEDIAGATE_CONFIG);
}

/** With redis.url set, tells running instances at once; without, they notice by themselves (key cache: 2 s). */
export async function tellInstances(config: Config, event: 'keys' | 'reload' | 'channels', extra: Record<string, string> = {}): Promise<void> {
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

export class CommandFailed extends Error {}

/** A command that cannot do what was asked (status 1), with a message saying why; no usage text. */
export class CommandError extends Error {}

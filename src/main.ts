import { parseArgs } from 'node:util';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadConfig, ConfigError } from './config-file/loader.js';
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
import { createAdminAccess, createKeyAdmin } from './admin/index.js';
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

const USAGE = `mediagate — a gateway to generative models

Usage:
  mediagate [serve]                          serve the gateway (config from MEDIAGATE_CONFIG, else the embedded default)
  mediagate keys create --name NAME [--models a,b] [--expires ISO-8601] [--rpm N] [--concurrency N] [--credit USD] [--json]
                       [--allow-duplicate-name]   (another active key may already carry NAME)
  mediagate keys list [--json]
  mediagate keys revoke ID
  mediagate keys update ID [--name N] [--models a,b|*] [--rpm N] [--concurrency N] [--expires ISO-8601|never] [--json]
  mediagate keys credit ID +USD | -USD        add to (or take from) a key's balance
  mediagate keys webhook-secret ID [--json]   make (or rotate) the key's webhook signing secret; shown once
  mediagate simulate [--port N] [--host H] [--video-seconds S]
  mediagate admin create --name NAME [--json]   an admin token (mga-…) for the admin API and console, shown once
  mediagate admin list [--json]
  mediagate admin revoke ID|NAME
  mediagate usage [--key ID] [--since ISO-8601] [--json]   totals per key and model from the usage ledger
  mediagate reload                           every instance re-reads its config file (needs redis.url; else kill -HUP <pid>)
  mediagate providers list [--json]          every provider type, built-in or loaded from providers.dir, with its capabilities and models
  mediagate providers check FILE [--json]    validate a provider manifest and print the requests it would send (calls nothing)
  mediagate migrate
  mediagate --version
`;

class UsageError extends Error {}

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

function parseNonNegInt(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v)) throw new UsageError(`--${name} must be a whole number, got "${v}"`);
  return Number(v);
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
  return { keys: createKeyAdmin(parts), access: createAdminAccess(parts), record: (action: string, target: string, detail: Record<string, unknown> = {}) => audit.record(who, action, target, detail) };
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
  return `${k.id}  ${k.name}  ${k.prefix}  ${k.status}  models=${k.models ? k.models.join(',') : '*'}  rpm=${k.rpm || '-'}  concurrency=${k.concurrency || '-'}  credit=${credit}${Number(k.owes_usd) > 0 ? `  owes=$${k.owes_usd}` : ''}${k.expires_at ? '  expires=' + k.expires_at : ''}`;
}

async function keysCommand(config: Config, argv: string[]): Promise<void> {
  const [sub, ...rest] = argv;
  if (sub === 'create' || sub === 'update') {
    const { values, positionals } = parseArgs({
      args: rest,
      options: {
        name: { type: 'string' },
        models: { type: 'string' },
        expires: { type: 'string' },
        rpm: { type: 'string' },
        concurrency: { type: 'string' },
        credit: { type: 'string' },
        json: { type: 'boolean', default: false },
        'allow-duplicate-name': { type: 'boolean', default: false },
      },
      strict: true,
      allowPositionals: sub === 'update',
    });
    for (const n of ['rpm', 'concurrency'] as const) parseNonNegInt(n, values[n]);
    const input: KeyInput = {};
    if (values.name !== undefined) input.name = values.name;
    // --models "" (or "*") on update allows every model again.
    if (values.models !== undefined) input.models = values.models === '' || values.models === '*' ? null : values.models;
    if (values.rpm !== undefined) input.rpm = values.rpm;
    if (values.concurrency !== undefined) input.concurrency = values.concurrency;
    // --expires never (on update) removes the expiry.
    if (values.expires !== undefined) input.expires_at = values.expires === 'never' ? null : values.expires;
    if (sub === 'update') {
      const id = positionals[0];
      if (!id || positionals.length > 1) throw new UsageError('keys update needs one key id, e.g. keys update key_abc --rpm 60');
      if (values.credit !== undefined) throw new UsageError('keys update does not change credit; use keys credit ID +USD');
      if (!Object.keys(input).length) throw new UsageError('keys update needs at least one of --name, --models, --rpm, --concurrency, --expires');
      const key = await withStore(config, (s) => asCommand(async () => {
        const a = adminOn(config, s);
        const k = await a.keys.update(id, input);
        await a.record('key.update', id, { ...input });
        return k;
      }), { mustExist: true });
      if (values.json) out(JSON.stringify(key));
      else out(`Updated ${keyLine(key)}`);
      return tellInstances(config, 'keys', { key_id: id });
    }
    if (!values.name) throw new UsageError('keys create needs --name NAME');
    if (values.credit !== undefined) input.credit_usd = values.credit;
    const { key, secret } = await withStore(config, (s) =>
      asCommand(async () => {
        const a = adminOn(config, s);
        const made = await a.keys.create(input, { allowDuplicateName: values['allow-duplicate-name'] });
        await a.record('key.create', made.key.id, { name: made.key.name });
        return made;
      }),
    );
    if (values.json) out(JSON.stringify({ id: key.id, name: key.name, key: secret }));
    else {
      out(`Created key ${key.id} (${key.name}). It is shown only this once:`);
      out(`  ${secret}`);
    }
    return;
  }
  if (sub === 'list') {
    const { values } = parseArgs({ args: rest, options: { json: { type: 'boolean', default: false } }, strict: true });
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
            expires_at: k.expires_at,
            revoked: k.status === 'revoked',
            created_at: k.created_at,
          })),
        ),
      );
    }
    if (!keys.length) return out('No keys. Create one with: mediagate keys create --name NAME');
    for (const k of keys) out(keyLine(k));
    return;
  }
  if (sub === 'revoke') {
    const id = rest[0];
    if (!id) throw new UsageError('keys revoke needs a key id (see mediagate keys list)');
    await withStore(
      config,
      (s) =>
        asCommand(async () => {
          const a = adminOn(config, s);
          await a.keys.revoke(id).catch((err: unknown) => {
            // Revoking twice is a mistake in the arguments (status 2), as revoking an unknown id is.
            throw err instanceof GatewayError && err.status === 409 ? new UsageError(`no active key with id ${id}`) : err;
          });
          await a.record('key.revoke', id);
        }),
      { mustExist: true },
    );
    out(`Revoked ${id}.`);
    return tellInstances(config, 'keys', { key_id: id });
  }
  if (sub === 'webhook-secret') {
    const { values, positionals } = parseArgs({ args: rest, options: { json: { type: 'boolean', default: false } }, allowPositionals: true, strict: true });
    const id = positionals[0];
    if (!id || positionals.length > 1) throw new UsageError('keys webhook-secret needs one key id (see mediagate keys list)');
    const secret = newWebhookSecret();
    const rotated = await withStore(
      config,
      async (s) => {
        const key = await new KeysRepo(s.db).findById(id);
        if (!key || key.revoked_at !== null) throw new UsageError(`no active key with id ${id}`);
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
    return;
  }
  if (sub === 'credit') {
    // Read positionally, not by parseArgs: "-5" after the id is an amount, not an option.
    const [id, amount, ...extra] = rest;
    if (!id || !amount || extra.length || !/^[+-]?\d+(\.\d+)?$/.test(amount)) {
      throw new UsageError('keys credit needs a key id and an amount in USD, e.g. keys credit key_abc +10 (or -2.5 to take credit away)');
    }
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
    return out(`Credit of ${id} is now $${key.credit_usd}${Number(key.held_usd) ? ` ($${key.held_usd} more held by running requests)` : ''}.`);
  }
  throw new UsageError(`unknown keys command "${sub ?? ''}"`);
}

async function adminCommand(config: Config, argv: string[]): Promise<void> {
  const [sub, ...rest] = argv;
  if (sub === 'create') {
    const { values } = parseArgs({ args: rest, options: { name: { type: 'string' }, json: { type: 'boolean', default: false } }, strict: true });
    if (!values.name) throw new UsageError('admin create needs --name NAME');
    const { token, secret } = await withStore(config, (s) =>
      asCommand(async () => {
        const a = adminOn(config, s);
        const made = await a.access.create(values.name!);
        await a.record('admin_token.create', made.token.id, { name: made.token.name });
        return made;
      }),
    );
    if (values.json) return out(JSON.stringify({ id: token.id, name: token.name, token: secret }));
    out(`Created admin token ${token.id} (${token.name}). It is shown only this once:`);
    out(`  ${secret}`);
    if (!config.admin.enabled) out('The admin API and console are off: set admin.enabled: true in the config file.');
    return;
  }
  if (sub === 'list') {
    const { values } = parseArgs({ args: rest, options: { json: { type: 'boolean', default: false } }, strict: true });
    const tokens = await withStore(config, (s) => adminOn(config, s).access.list(), { mustExist: true });
    if (values.json) return out(JSON.stringify(tokens));
    if (!tokens.length) return out('No admin tokens. Create one with: mediagate admin create --name NAME');
    for (const t of tokens) out(`${t.id}  ${t.name}  ${t.prefix}  ${t.revoked_at ? 'revoked' : 'active'}  created=${t.created_at}${t.last_used_at ? '  last_used=' + t.last_used_at : ''}`);
    return;
  }
  if (sub === 'revoke') {
    const [id, ...extra] = rest;
    if (!id || extra.length) throw new UsageError('admin revoke needs one admin token id or name (see mediagate admin list)');
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
    return out(`Revoked admin token ${t.id} (${t.name}); its console sessions ended.`);
  }
  throw new UsageError(`unknown admin command "${sub ?? ''}"`);
}

/** With redis.url set, tells running instances at once; without, they notice by themselves (key cache: 2 s). */
async function tellInstances(config: Config, event: 'keys' | 'reload', extra: Record<string, string> = {}): Promise<void> {
  const { url, key_prefix } = config.redis;
  if (!url) return;
  try {
    const n = await publishOnce({ url, key_prefix }, event, extra);
    out(event === 'keys' ? `Told ${n} running instance(s) to drop their cached keys.` : `Reload sent to ${n} running instance(s).`);
  } catch (err) {
    const fallback = event === 'keys' ? 'running instances stop accepting the key within 2 s anyway' : 'send SIGHUP to each instance instead';
    process.stderr.write(`mediagate: Redis unreachable (${(err as Error).message}); ${fallback}\n`);
    if (event === 'reload') throw new CommandFailed();
  }
}

class CommandFailed extends Error {}

/** A command that cannot do what was asked (status 1), with a message saying why; no usage text. */
class CommandError extends Error {}

async function usageCommand(config: Config, argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: { key: { type: 'string' }, since: { type: 'string' }, json: { type: 'boolean', default: false } },
    strict: true,
  });
  let sinceMs: number | undefined;
  if (values.since !== undefined) {
    sinceMs = Date.parse(values.since);
    if (!Number.isFinite(sinceMs)) throw new UsageError(`--since must be an ISO-8601 time, got "${values.since}"`);
  }
  const rows = await withStore(config, (s) => new UsageAdmin(new UsageReportsRepo(s.db), new UsageRepo(s.db)).totals({ keyId: values.key, sinceMs }), { mustExist: true });
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
        rows: rows.map((r) => ({ ...r, cost_usd: usd(r.cost_micros), overage_usd: usd(r.overage_micros) })),
        total: { ...total, cost_usd: usd(total.cost_micros), overage_usd: usd(total.overage_micros) },
      }),
    );
  }
  if (!rows.length) return out('No usage recorded' + (values.key ? ` for ${values.key}` : '') + (values.since ? ` since ${values.since}` : '') + '.');
  // OVERAGE: the part of COST that neither the holds nor the balance covered (what the key owes or owed).
  const table: string[][] = [['KEY', 'MODEL', 'REQUESTS', 'INPUT', 'OUTPUT', 'COST', 'OVERAGE']];
  const line = (key: string, model: string, r: Omit<UsageTotal, 'key_id' | 'model'>) => [
    key,
    model,
    String(r.requests),
    String(r.input_units),
    String(r.output_units),
    microsToUsd(r.cost_micros),
    microsToUsd(r.overage_micros),
  ];
  // Requests refused before a model was read (key rate limits) have no model.
  for (const r of rows) table.push(line(r.key_id, r.model || '-', r));
  table.push(line('TOTAL', '', total));
  const widths = table[0].map((_, i) => Math.max(...table.map((row) => row[i].length)));
  for (const row of table) out(row.map((c, i) => (i >= 2 ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join('  ').trimEnd());
}

async function serve(config: Config, source: string): Promise<void> {
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
  };
  const separateAdmin = config.admin.enabled && Boolean(config.admin.listen);
  const app = buildApp(services, { admin: adminOptions, surface: separateAdmin ? 'public' : undefined });
  const adminApp = separateAdmin ? buildApp(services, { admin: adminOptions, surface: 'admin' }) : null;
  const candidate = generateApiKey();
  const created = await services.keys.createFirst({ name: 'default', keyHash: hashApiKey(candidate), keyPrefix: displayPrefix(candidate) }, services.store.dialect);
  const firstKey = created ? candidate : null;
  // SIGHUP: re-read the config file, swap the catalog, tell the other instances (docs/deployment.md).
  const started = await startCluster(services, { load: () => loadConfig().config, log: app.log });
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
  // The banner below is the start-up message; Fastify's own "Server listening at" JSON log line
  // would say the same a second time in another format (docs/deployment.md, "Output").
  const level = app.log.level;
  app.log.level = 'warn';
  const address = await app.listen({ host: config.server.host, port: config.server.port }).finally(() => (app.log.level = level));
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
    out('Try it:');
    out(`  curl -s ${base}/v1/models -H "Authorization: Bearer ${firstKey}"`);
  }
}

async function simulate(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: { port: { type: 'string', default: '9090' }, host: { type: 'string', default: '127.0.0.1' }, 'video-seconds': { type: 'string', default: '10' } },
    strict: true,
  });
  const port = parseNonNegInt('port', values.port);
  const videoSeconds = Number(values['video-seconds']);
  if (!Number.isFinite(videoSeconds) || videoSeconds < 0) throw new UsageError('--video-seconds must be a non-negative number');
  const { startSimulator } = await import('./simulator/server.js');
  const sim = await startSimulator({ port, host: values.host, videoSeconds });
  out(`mediagate simulator listening on ${sim.url}`);
  const stop = () => void sim.close().then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

/** package.json's version; this file runs as src/main.ts (tests) or dist/main.js, both one level down. */
function packageVersion(): string {
  return (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}

export async function main(argv: string[]): Promise<number> {
  const [cmd = 'serve', ...rest] = argv;
  try {
    if (cmd === 'help' || cmd === '--help' || cmd === '-h') {
      process.stdout.write(USAGE);
      return 0;
    }
    if (cmd === '--version' || cmd === '-v' || cmd === 'version') {
      out(`mediagate ${packageVersion()}`);
      return 0;
    }
    if (cmd === 'providers') return await (await import('./cli-providers.js')).providersCommand(rest);
    if (cmd === 'simulate') {
      await simulate(rest);
      return -1;
    }
    const { config, source } = loadConfig();
    if (cmd === 'serve') {
      await serve(config, source);
      return -1;
    }
    if (cmd === 'admin') {
      await adminCommand(config, rest);
      return 0;
    }
    if (cmd === 'keys') {
      await keysCommand(config, rest);
      return 0;
    }
    if (cmd === 'usage') {
      await usageCommand(config, rest);
      return 0;
    }
    if (cmd === 'reload') {
      if (!config.redis.url) throw new UsageError('reload needs redis.url to reach the instances; without Redis, send SIGHUP to each (kill -HUP <pid>)');
      await tellInstances(config, 'reload');
      return 0;
    }
    if (cmd === 'migrate') {
      await withStore(config, async () => undefined);
      out(`Migrations applied to ${config.database.url.startsWith('sqlite:') ? config.database.url : 'PostgreSQL'}.`);
      return 0;
    }
    throw new UsageError(`unknown command "${cmd}"`);
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
      fail(err.message, `\n${USAGE}`);
      return 2;
    }
    if (String((err as NodeJS.ErrnoException | undefined)?.code ?? '').startsWith('ERR_PARSE_ARGS')) {
      fail((err as Error).message);
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

import { parseArgs } from 'node:util';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadConfig, ConfigError } from './config/loader.js';
import type { Config } from './config/schema.js';
import { openStore, parseDatabaseUrl } from './store/db.js';
import { acquireInstanceLock, InstanceLockError } from './store/instance-lock.js';
import { KeysRepo, keyModels } from './store/repos/keys.js';
import { ReservationsRepo } from './store/repos/reservations.js';
import { UsageRepo, type UsageTotal } from './store/repos/usage.js';
import { generateApiKey, hashApiKey, displayPrefix } from './auth/keys.js';
import { buildApp } from './app.js';
import { createServices, GatewayConfigError } from './services.js';
import { startSimulator } from './simulator/server.js';
import { startCluster } from './cluster/index.js';
import { publishOnce } from './cluster/bus.js';

const USAGE = `mediagate — a gateway to generative models

Usage:
  mediagate [serve]                          serve the gateway (config from MEDIAGATE_CONFIG, else the embedded default)
  mediagate keys create --name NAME [--models a,b] [--expires ISO-8601] [--rpm N] [--concurrency N] [--credit USD] [--json]
  mediagate keys list [--json]
  mediagate keys revoke ID
  mediagate keys create … --allow-duplicate-name   another active key may already carry NAME
  mediagate keys credit ID +USD | -USD        add to (or take from) a key's balance
  mediagate simulate [--port N] [--host H] [--video-seconds S]
  mediagate usage [--key ID] [--since ISO-8601] [--json]   totals per key and model from the usage ledger
  mediagate reload                           every instance re-reads its config file (needs redis.url; else kill -HUP <pid>)
  mediagate migrate
  mediagate --version
`;

class UsageError extends Error {}

function out(line: string): void {
  process.stdout.write(line + '\n');
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

async function keysCommand(config: Config, argv: string[]): Promise<void> {
  const [sub, ...rest] = argv;
  if (sub === 'create') {
    const { values } = parseArgs({
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
    });
    if (!values.name) throw new UsageError('keys create needs --name NAME');
    let expiresAt: number | null = null;
    if (values.expires !== undefined) {
      expiresAt = Date.parse(values.expires);
      if (!Number.isFinite(expiresAt)) throw new UsageError(`--expires must be an ISO-8601 time, got "${values.expires}"`);
    }
    let creditMicros: number | null = null;
    if (values.credit !== undefined) {
      const usd = Number(values.credit);
      if (!Number.isFinite(usd) || usd < 0) throw new UsageError(`--credit must be a non-negative amount of USD, got "${values.credit}"`);
      creditMicros = usdToMicros(usd);
    }
    const models = values.models ? values.models.split(',').map((s) => s.trim()).filter(Boolean) : null;
    for (const m of models ?? []) if (!config.models[m]) throw new UsageError(`--models: "${m}" is not a configured model`);
    const key = generateApiKey();
    const row = await withStore(config, async (s) => {
      const repo = new KeysRepo(s.db);
      // Names are how operators tell keys apart in `keys list` and `usage`; two active keys of one
      // name are almost always a mistake (a script run twice), so it takes an explicit flag.
      if (!values['allow-duplicate-name']) {
        const same = (await repo.list()).filter((k) => k.name === values.name && k.revoked_at === null);
        if (same.length) {
          throw new CommandError(
            `an active key named "${values.name}" exists already (${same.map((k) => k.id).join(', ')}); choose another name, revoke it, or pass --allow-duplicate-name`,
          );
        }
      }
      return repo.create({
        name: values.name!,
        keyHash: hashApiKey(key),
        keyPrefix: displayPrefix(key),
        models,
        rpm: parseNonNegInt('rpm', values.rpm) ?? config.limits.key_rpm,
        concurrency: parseNonNegInt('concurrency', values.concurrency) ?? config.limits.key_concurrency,
        creditMicros,
        expiresAt,
      });
    });
    if (values.json) out(JSON.stringify({ id: row.id, name: row.name, key }));
    else {
      out(`Created key ${row.id} (${row.name}). It is shown only this once:`);
      out(`  ${key}`);
    }
    return;
  }
  if (sub === 'list') {
    const { values } = parseArgs({ args: rest, options: { json: { type: 'boolean', default: false } }, strict: true });
    const rows = await withStore(config, (s) => new KeysRepo(s.db).list(), { mustExist: true });
    const view = rows.map((r) => ({
      id: r.id,
      name: r.name,
      prefix: `${r.key_prefix}…`,
      models: keyModels(r),
      rpm: Number(r.rpm),
      concurrency: Number(r.concurrency),
      credit: r.credit_micros === null ? null : Number(r.credit_micros) / 1_000_000,
      // Real costs beyond hold and balance; the key is refused until a top-up pays it.
      owes: Number(r.overage_micros) / 1_000_000,
      expires_at: r.expires_at === null ? null : new Date(Number(r.expires_at)).toISOString(),
      revoked: r.revoked_at !== null,
      created_at: new Date(Number(r.created_at)).toISOString(),
    }));
    if (values.json) return out(JSON.stringify(view));
    if (!view.length) return out('No keys. Create one with: mediagate keys create --name NAME');
    for (const k of view) {
      const state = k.revoked ? 'revoked' : k.expires_at && Date.parse(k.expires_at) <= Date.now() ? 'expired' : 'active';
      out(
        `${k.id}  ${k.name}  ${k.prefix}  ${state}  models=${k.models ? k.models.join(',') : '*'}  rpm=${k.rpm || '-'}  concurrency=${k.concurrency || '-'}  credit=${k.credit === null ? 'unlimited' : '$' + k.credit}${k.owes > 0 ? '  owes=$' + k.owes : ''}${k.expires_at ? '  expires=' + k.expires_at : ''}`,
      );
    }
    return;
  }
  if (sub === 'revoke') {
    const id = rest[0];
    if (!id) throw new UsageError('keys revoke needs a key id (see mediagate keys list)');
    const ok = await withStore(config, (s) => new KeysRepo(s.db).revoke(id), { mustExist: true });
    if (!ok) throw new UsageError(`no active key with id ${id}`);
    out(`Revoked ${id}.`);
    return tellInstances(config, 'keys', { key_id: id });
  }
  if (sub === 'credit') {
    // Read positionally, not by parseArgs: "-5" after the id is an amount, not an option.
    const [id, amount, ...extra] = rest;
    if (!id || !amount || extra.length || !/^[+-]?\d+(\.\d+)?$/.test(amount)) {
      throw new UsageError('keys credit needs a key id and an amount in USD, e.g. keys credit key_abc +10 (or -2.5 to take credit away)');
    }
    const micros = usdToMicros(Number(amount));
    if (micros === 0) throw new UsageError('keys credit: the amount must not be zero');
    const balance = await withStore(
      config,
      async (s) => {
        const repo = new ReservationsRepo(s.db);
        const before = await repo.balance(id);
        if (before === undefined) throw new UsageError(`no key with id ${id}`);
        if (before === null) throw new UsageError(`key ${id} has unlimited credit; nothing to change`);
        // A balance never goes below zero: a deduction larger than what is left is refused whole.
        if (!(await repo.topUp(id, micros))) throw new CommandError(`key ${id} has ${microsToUsd(before)} left; cannot take ${microsToUsd(-micros)}`);
        return repo.balance(id);
      },
      { mustExist: true },
    );
    return out(`Credit of ${id} is now ${microsToUsd(balance ?? null)}.`);
  }
  throw new UsageError(`unknown keys command "${sub ?? ''}"`);
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
  const rows = await withStore(config, (s) => new UsageRepo(s.db).totals({ keyId: values.key, sinceMs }), { mustExist: true });
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
  const app = buildApp(services);
  const candidate = generateApiKey();
  const created = await services.keys.createFirst({ name: 'default', keyHash: hashApiKey(candidate), keyPrefix: displayPrefix(candidate) }, services.store.dialect);
  const firstKey = created ? candidate : null;
  // SIGHUP: re-read the config file, swap the catalog, tell the other instances (docs/deployment.md).
  const cluster = await startCluster(services, { load: () => loadConfig().config, log: app.log });
  process.on('SIGHUP', () => void cluster.reloadAndTell('SIGHUP'));
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
      await app.close();
      clearInterval(idleSweep);
      await cluster.close();
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
    if (cmd === 'simulate') {
      await simulate(rest);
      return -1;
    }
    const { config, source } = loadConfig();
    if (cmd === 'serve') {
      await serve(config, source);
      return -1;
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
      process.stderr.write(`mediagate: invalid configuration: ${err.message}\n`);
      return 2;
    }
    if (err instanceof CommandFailed) return 1;
    if (err instanceof CommandError || err instanceof InstanceLockError) {
      process.stderr.write(`mediagate: ${err.message}\n`);
      return 1;
    }
    if (err instanceof UsageError) {
      process.stderr.write(`mediagate: ${err.message}\n\n${USAGE}`);
      return 2;
    }
    if (String((err as NodeJS.ErrnoException | undefined)?.code ?? '').startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`mediagate: ${(err as Error).message}\n`);
      return 2;
    }
    process.stderr.write(`mediagate: ${(err as Error).message}\n`);
    return 1;
  }
}

// Run when executed directly (not when imported by tests).
if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  void main(process.argv.slice(2)).then((code) => {
    if (code >= 0) process.exit(code);
  });
}

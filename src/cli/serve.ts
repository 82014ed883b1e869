import { parseCommand, UsageError, wholeNumber, type CommandSpec } from './args.js';
import type { Config } from '../config/schema.js';
import { acquireInstanceLock } from '../store/instance-lock.js';
import { generateApiKey, hashApiKey, displayPrefix } from '../auth/keys.js';
import { buildApp } from '../app.js';
import { createServices } from '../services.js';
import { startCluster } from '../cluster/index.js';
import { publishOnce } from '../cluster/bus.js';
import { CONFIG_OPTION, CommandError, configFor, out, sqliteFile, tellInstances, withStore } from './common.js';

// `mediagate serve` (the default command), `simulate`, `reload` and `migrate`.

export async function serve(config: Config, source: string, reload: () => Config): Promise<void> {
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

export const serveSpec = {
  name: 'serve',
  summary: 'Serve the gateway (the default command). The config comes from --config, else $MEDIAGATE_CONFIG, else the embedded default.',
  options: {
    port: { type: 'string', arg: 'N', help: 'listen on this port (wins over server.port and $PORT; 0: any free port)' },
    host: { type: 'string', arg: 'HOST', help: 'listen on this address (wins over server.host and $HOST)' },
    ...CONFIG_OPTION,
  },
} satisfies CommandSpec;

export async function serveCommand(argv: string[]): Promise<void> {
  const { values } = parseCommand(serveSpec, argv);
  wholeNumber(serveSpec, 'port', values.port);
  // --port and --host act as PORT and HOST do, on a reload (SIGHUP) too.
  const env = { ...process.env, ...(values.port !== undefined ? { PORT: values.port } : {}), ...(values.host !== undefined ? { HOST: values.host } : {}) };
  const { config, source } = configFor(values, env);
  await serve(config, source, () => configFor(values, env).config);
}

export const simulateSpec = {
  name: 'simulate',
  summary: 'Run the provider simulator alone (what the embedded default runs in-process).',
  options: {
    port: { type: 'string', arg: 'N', help: 'listen on this port (default 9090)' },
    host: { type: 'string', arg: 'HOST', help: 'listen on this address (default 127.0.0.1)' },
    'video-seconds': { type: 'string', arg: 'S', help: 'how long a simulated video takes (default 10)' },
  },
} satisfies CommandSpec;

export async function simulate(argv: string[]): Promise<void> {
  const { values } = parseCommand(simulateSpec, argv);
  const port = wholeNumber(simulateSpec, 'port', values.port ?? '9090');
  const videoSeconds = Number(values['video-seconds'] ?? '10');
  if (!Number.isFinite(videoSeconds) || videoSeconds < 0) throw new UsageError('simulate: --video-seconds must be a non-negative number', simulateSpec);
  const { startSimulator } = await import('../simulator/server.js');
  const sim = await startSimulator({ port, host: values.host ?? '127.0.0.1', videoSeconds });
  out(`mediagate simulator listening on ${sim.url}`);
  const stop = () => void sim.close().then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

export const reloadSpec = {
  name: 'reload',
  summary: 'Every running instance re-reads its config file (needs redis.url; without Redis: kill -HUP <pid>).',
  options: { ...CONFIG_OPTION },
} satisfies CommandSpec;

export async function reloadCommand(argv: string[]): Promise<void> {
  const { values } = parseCommand(reloadSpec, argv);
  const { config } = configFor(values);
  if (!config.redis.url) throw new CommandError('reload needs redis.url to reach the instances; without Redis, send SIGHUP to each (kill -HUP <pid>)');
  await tellInstances(config, 'reload');
}

export const migrateSpec = { name: 'migrate', summary: 'Apply the database migrations and exit.', options: { ...CONFIG_OPTION } } satisfies CommandSpec;

export async function migrateCommand(argv: string[]): Promise<void> {
  const { values } = parseCommand(migrateSpec, argv);
  const { config } = configFor(values);
  await withStore(config, async () => undefined);
  out(`Migrations applied to ${config.database.url.startsWith('sqlite:') ? config.database.url : 'PostgreSQL'}.`);
}

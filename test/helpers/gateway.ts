import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { Gateway } from '../../src/pipeline/gateway.js';
import { validateConfig } from '../../src/config-file/loader.js';
import type { Config } from '../../src/config/schema.js';
import { buildApp, type AppOptions } from '../../src/app.js';
import { createServices, type Services } from '../../src/services.js';
import { generateApiKey, hashApiKey, displayPrefix } from '../../src/auth/keys.js';
import { SIMULATOR_MODELS, SEEDANCE_MODELS } from '../../src/config-file/defaults.js';
import { freshDatabaseUrl } from './databases.js';

export interface TestGateway {
  url: string;
  app: Gateway;
  services: Services;
  config: Config;
  /** Every log line the gateway wrote, raw. */
  logs: string[];
  /** Every operational warning (`mediagate: …` on stderr in production), e.g. Redis unreachable. */
  warnings: string[];
  createKey(opts?: KeyOptions): Promise<{ id: string; key: string }>;
  close(): Promise<void>;
}

export interface KeyOptions {
  name?: string;
  models?: string[] | null;
  rpm?: number;
  concurrency?: number;
  creditMicros?: number | null;
  expiresAt?: number | null;
}

/**
 * A gateway on a loopback port 0 with its own fresh database (SQLite file in a temp folder, or a
 * fresh PostgreSQL database when MEDIAGATE_TEST_DB=postgres) and, unless the config names other
 * channels, the simulator embedded on its own port 0.
 */
export interface GatewayOptions {
  /**
   * Warnings the test provokes on purpose (an unreachable Redis); they are only collected in
   * `warnings`. Any other warning is also printed, so a real problem is never hidden.
   */
  expectWarnings?: RegExp;
  /** Options of the app (the admin API's reload hook, …). */
  app?: Omit<AppOptions, 'logStream'>;
  /** No background poller (nor archive and webhook workers): the test drives `services.tasks.poller.pollTask` itself. */
  noPoller?: boolean;
  /** Environment of the services (MEDIAGATE_SECRET_KEY); the process's when absent. */
  env?: Record<string, string | undefined>;
}

export async function startGateway(overrides: Record<string, unknown> = {}, opts: GatewayOptions = {}): Promise<TestGateway> {
  const db = await freshDatabaseUrl();
  const raw: Record<string, unknown> = {
    server: { host: '127.0.0.1', port: 0 },
    database: { url: db.url },
    log: { level: 'info' },
    simulator: { embedded: true, video_seconds: 0.3 },
    // Every task polled fast, also one whose provider calls back (a public_url no provider reaches).
    tasks: { poll_interval_ms: 50, tick_ms: 20, callback_poll_interval_ms: 50 },
    channels: [{ name: 'simulator', type: 'simulator', models: [...Object.keys(SIMULATOR_MODELS), ...Object.keys(SEEDANCE_MODELS)] }],
    models: { ...SIMULATOR_MODELS, ...SEEDANCE_MODELS },
    ...overrides,
  };
  const config = validateConfig(raw, 'test config');
  const logs: string[] = [];
  const logStream = new Writable({
    write(chunk, _enc, cb) {
      logs.push(String(chunk));
      cb();
    },
  });
  const warnings: string[] = [];
  const warn = (message: string) => {
    warnings.push(message);
    if (!opts.expectWarnings?.test(message)) process.stderr.write(`mediagate (test gateway): ${message}\n`);
  };
  const services = await createServices(config, { warn, noPoller: opts.noPoller, env: opts.env, logStream });
  const app = buildApp(services, { ...opts.app, logStream });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    app,
    services,
    config,
    logs,
    warnings,
    async createKey(opts: KeyOptions = {}) {
      const key = generateApiKey();
      const row = await services.keys.create({
        name: opts.name ?? 'test',
        keyHash: hashApiKey(key),
        keyPrefix: displayPrefix(key),
        models: opts.models ?? null,
        rpm: opts.rpm,
        concurrency: opts.concurrency,
        creditMicros: opts.creditMicros ?? null,
        expiresAt: opts.expiresAt ?? null,
      });
      return { id: row.id, key };
    },
    async close() {
      await app.close();
      await services.close();
      await db.drop();
    },
  };
}

/** The usage ledger rows of a key, oldest first, after writing out what the ledger buffered. */
export async function usageRowsOf(services: Services, keyId: string) {
  await services.ledger.flush();
  return services.store.db.selectFrom('usage').selectAll().where('key_id', '=', keyId).orderBy('id').execute();
}

/** A temporary folder removed by the returned function. */
export function tempDir(prefix = 'mediagate-test-'): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

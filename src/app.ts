import Fastify, { LogController, type FastifyInstance, type FastifyError } from 'fastify';
import type { DestinationStream } from 'pino';
import type { Config } from './config/schema.js';
import { openStore, type Store } from './store/db.js';
import { KeysRepo } from './store/repos/keys.js';
import { ModelsRepo } from './store/repos/models.js';
import { ReservationsRepo } from './store/repos/reservations.js';
import { Authenticator } from './auth/authenticator.js';
import { registerAuth } from './auth/hook.js';
import { Catalog } from './relay/catalog.js';
import { redact, registerSecret } from './http/redact.js';
import { GatewayError, errorBody, errors, familyOf } from './http/errors.js';
import { registerModelRoutes } from './routes/models.js';
import { registerHealthRoutes } from './routes/health.js';
import { registerImageRoutes } from './routes/images.js';
import { registerChatRoutes } from './routes/chat.js';
import { registerMessagesRoutes } from './routes/messages.js';
import { registerVideoRoutes } from './routes/video.js';
import { createTaskServices, type TaskServices } from './tasks/index.js';
import { startSimulator, type Simulator } from './simulator/server.js';
import { startStableSimulator } from './simulator/stable-address.js';
import { UsageRepo } from './store/repos/usage.js';
import { CreditService } from './limits/credit.js';
import { createRateLimits, type RateLimits } from './limits/rate-limits.js';
import { registerRateLimits } from './limits/hook.js';
import { registerUsageBackstop } from './limits/usage-backstop.js';
import { registerRouteErrors } from './http/route-table.js';
import { validationMessage, type SchemaError } from './http/validation-message.js';
import { registerRequestGuards, tooLarge } from './http/request-guards.js';
import { renderClientError, renderFrameworkError } from './http/framework-errors.js';
import { UsageLedger } from './limits/ledger.js';
import { Relay } from './relay/relay.js';
import { Metrics } from './http/metrics.js';
import swagger from '@fastify/swagger';
import { UpstreamClient } from './relay/upstream.js';

/** Everything the routes need, built once per process. */
export interface Services {
  config: Config;
  store: Store;
  keys: KeysRepo;
  models: ModelsRepo;
  reservations: ReservationsRepo;
  authenticator: Authenticator;
  catalog: Catalog;
  usage: UsageRepo;
  ledger: UsageLedger;
  credit: CreditService;
  relay: Relay;
  /** Rate limits of keys and models (memory, or Redis when redis.url is set). */
  limits: RateLimits;
  upstream: UpstreamClient;
  metrics: Metrics;
  /** The in-process simulator, when the config embeds one. */
  simulator: Simulator | null;
  /** Video tasks: the service behind the routes and the poller (running unless noPoller). */
  tasks: TaskServices;
  close(): Promise<void>;
}

export interface ServiceOptions {
  /** Skip starting the embedded simulator even if the config asks for it. */
  noSimulator?: boolean;
  /** Do not start the video task poller (CLI commands, tests that drive pollers themselves). */
  noPoller?: boolean;
  /** Keep the embedded simulator's port and URL secret in this file across restarts (serve on SQLite). */
  simulatorStateFile?: string;
  /**
   * Where operational warnings go (Redis unreachable, a failed ledger write, a pool problem); as
   * `mediagate: <message>` lines on stderr when absent. Tests collect them instead.
   */
  warn?: (message: string) => void;
}

export async function createServices(config: Config, opts: ServiceOptions = {}): Promise<Services> {
  const warn = opts.warn ?? ((m: string) => process.stderr.write(`mediagate: ${m}\n`));
  let simulator: Simulator | null = null;
  if (config.simulator.embedded && !opts.noSimulator) {
    const simOpts = { videoSeconds: config.simulator.video_seconds, urlTtlS: config.simulator.url_ttl_s };
    // A configured port is kept as given; port 0 keeps the one of the last start when it can.
    simulator =
      config.simulator.port === 0 && opts.simulatorStateFile
        ? await startStableSimulator(opts.simulatorStateFile, simOpts)
        : await startSimulator({ ...simOpts, port: config.simulator.port });
  }
  // A simulator channel without a base_url points at the in-process simulator.
  for (const ch of config.channels) {
    registerSecret(ch.api_key);
    // The simulator wants a key on its API routes, as the real providers do; any will do.
    if (ch.type === 'simulator' && !ch.api_key) ch.api_key = 'simulator-key';
    if (ch.type === 'simulator' && !ch.base_url) {
      if (!simulator) throw new GatewayConfigError(`channel "${ch.name}": a simulator channel needs base_url unless simulator.embedded is true`);
      ch.base_url = simulator.url;
    }
  }
  let store: Store;
  try {
    store = await openStore(config.database.url, { timeouts: config.database, warn });
  } catch (err) {
    await simulator?.close();
    throw err;
  }
  const keys = new KeysRepo(store.db);
  const models = new ModelsRepo(store.db);
  const firstSeen = await models.ensureFirstSeen(Object.keys(config.models));
  const catalog = new Catalog(config, firstSeen);
  const reservations = new ReservationsRepo(store.db, { groupCommit: store.dialect === 'sqlite' });
  const usage = new UsageRepo(store.db);
  const ledger = new UsageLedger(usage, (err) => warn(`usage ledger write failed: ${(err as Error).message}`));
  // An unreachable Redis is reported, not fatal: limits then hold per instance (docs/limits.md).
  const limits = await createRateLimits(config, warn);
  const upstream = new UpstreamClient({
    connectMs: config.relay.connect_timeout_ms,
    firstByteMs: config.relay.first_byte_timeout_ms,
    idleMs: config.relay.stream_idle_timeout_ms,
    maxConnections: config.relay.max_connections_per_origin,
  });
  const credit = new CreditService(reservations);
  const metrics = new Metrics();
  const relay = new Relay(config.relay, (target, failure) => metrics.upstreamFailures.inc({ channel: target.channel.name, kind: failure.kind }));
  const tasks = createTaskServices({ config, store, catalog, relay, upstream, credit, ledger });
  if (!opts.noPoller) tasks.poller.start();
  const holdSweep = setInterval(() => {
    credit.releaseAbandoned(config.limits.abandoned_hold_s * 1000).catch((err: unknown) => warn(`abandoned-hold sweep failed: ${(err as Error).message}`));
  }, 60_000);
  holdSweep.unref();
  return {
    config,
    store,
    keys,
    models,
    reservations,
    authenticator: new Authenticator(keys),
    catalog,
    usage,
    ledger,
    credit,
    limits,
    relay,
    upstream,
    metrics,
    simulator,
    tasks,
    async close() {
      clearInterval(holdSweep);
      await tasks.poller.stop();
      await ledger.close();
      await limits.close();
      await upstream.close();
      await store.close();
      await simulator?.close();
    },
  };
}

export class GatewayConfigError extends Error {}

export interface AppOptions {
  /** Where log lines go (tests capture them); stdout when absent. */
  logStream?: DestinationStream;
}

export function buildApp(services: Services, opts: AppOptions = {}): FastifyInstance {
  const { config } = services;
  const app = Fastify({
    logger: {
      level: config.log.level,
      // Keys must never reach a log line, whatever a future log call includes.
      redact: { paths: ['req.headers.authorization', 'req.headers["x-api-key"]', 'headers.authorization', 'headers["x-api-key"]'], censor: '[redacted]' },
      ...(opts.logStream ? { stream: opts.logStream } : {}),
    },
    // Per-request log lines cost throughput; the usage ledger records every request instead.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: Math.floor(config.server.body_limit_mb * 1024 * 1024),
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    // Video task ids may be 128 characters; longer path parameters are answered by renderFrameworkError.
    routerOptions: { maxParamLength: 256 },
    frameworkErrors: renderFrameworkError,
    clientErrorHandler: renderClientError,
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, allErrors: false } },
  });

  app.setErrorHandler((err: FastifyError | GatewayError, request, reply) => {
    const g = toGatewayError(err);
    // The message may quote client input (a pasted key): scrub it like an answer.
    if (g.status >= 500) request.log.error({ err: { message: redact(err.message), code: (err as FastifyError).code } }, 'request failed');
    for (const [k, v] of Object.entries(g.headers)) reply.header(k, v);
    return reply.code(g.status).send(errorBody(familyOf(request.url), g));
  });

  // Before any route: it collects them all, for 405 answers.
  registerRouteErrors(app);
  registerRequestGuards(app, Math.floor(config.server.body_limit_mb * 1024 * 1024));
  registerAuth(app, services.authenticator);
  registerRateLimits(app, services.limits, services.ledger);
  registerUsageBackstop(app, services.ledger);
  services.metrics.instrument(app);
  // Routes go in a plugin loaded after @fastify/swagger, so /openapi.json describes every one.
  app.register(swagger, {
    openapi: { info: { title: 'mediagate', version: '0.1.0', description: 'Gateway to generative models: chat, images and video tasks.' } },
  });
  app.register(async (api) => {
    registerHealthRoutes(api, services.store);
    registerModelRoutes(api, services.catalog);
    registerImageRoutes(api, services);
    registerChatRoutes(api, services);
    registerMessagesRoutes(api, services);
    registerVideoRoutes(api, services.tasks.service);
    api.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  });
  return app;
}

/** Maps anything thrown in a request to the gateway's status table. */
export function toGatewayError(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  const e = err as FastifyError & { validation?: SchemaError[]; validationContext?: string };
  if (e && Array.isArray(e.validation)) return new GatewayError(400, 'invalid_request', `Invalid request: ${validationMessage(e.validationContext ?? 'body', e.validation)}.`);
  switch (e?.code) {
    // The store's DatabaseUnavailableError: a restart, failover, hang or lock; the client may retry.
    case 'database_unavailable':
      return errors.databaseUnavailable();
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return tooLarge();
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new GatewayError(400, 'invalid_request', 'The request body must be JSON (Content-Type: application/json).');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new GatewayError(400, 'invalid_request', 'The request body is empty; a JSON object is required.');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new GatewayError(400, 'invalid_request', 'The Content-Length header does not match the body.');
    default:
      break;
  }
  const status = typeof e?.statusCode === 'number' ? e.statusCode : 500;
  if (status >= 400 && status < 500) {
    // Limits enforced by plugins (multipart file and part sizes) say 413 too.
    if (status === 413) return tooLarge();
    // Fastify's own 4xx (bad JSON, bad headers, …): keep the status, give a clean message.
    const message = e.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || /JSON/i.test(e.message ?? '') ? 'The request body is not valid JSON.' : 'Bad request.';
    return new GatewayError(status, 'invalid_request', message);
  }
  return new GatewayError(500, 'internal_error', 'The gateway failed to handle this request.');
}

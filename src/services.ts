import type { ChannelConfig, Config } from './config/schema.js';
import { openStore, type Store } from './store/db.js';
import { KeysRepo } from './store/repos/keys.js';
import { ModelsRepo } from './store/repos/models.js';
import { ReservationsRepo } from './store/repos/reservations.js';
import { UsageRepo } from './store/repos/usage.js';
import { ResponsesRepo } from './store/repos/responses.js';
import { IdempotencyRepo } from './store/repos/idempotency.js';
import { Idempotency, LocalClaims } from './pipeline/idempotency.js';
import { Authenticator } from './auth/authenticator.js';
import { Catalog } from './relay/catalog.js';
import { Relay } from './relay/relay.js';
import { ChannelStats } from './relay/channel-stats.js';
import { registerChannelSecrets, registerSecret } from './http/redact.js';
import { Metrics } from './http/metrics.js';
import { createTaskServices, type TaskServices } from './tasks/index.js';
import { createTaskLifecycle, type TaskLifecycle } from './tasks/lifecycle.js';
import { ImageWaits } from './tasks/image-waits.js';
import { taskLogger } from './tasks/log.js';
import { ImageWaitsRepo } from './store/repos/image-waits.js';
import type { Simulator } from './simulator/server.js';
import { CreditService } from './limits/credit.js';
import { DEFAULT_LEASE_OPTIONS, LeaseBook } from './limits/credit-lease.js';
import { BudgetLeaseBook, DEFAULT_BUDGET_LEASE_OPTIONS } from './limits/budget-lease.js';
import { BudgetLeasesRepo } from './store/repos/budget-leases.js';
import { LeasesRepo } from './store/repos/leases.js';
import { createRateLimits, type RateLimits } from './limits/rate-limits.js';
import { UsageLedger } from './limits/ledger.js';
import { UpstreamClient } from './upstream/client.js';
import { providerSetOf } from './config-file/loader.js';
import { installProviders } from './providers/index.js';
import { ChannelsRepo } from './store/repos/channels.js';
import { SecretBox } from './store/secret-box.js';
import { RuntimeChannels } from './cluster/channels.js';
import { ChannelHealth } from './relay/health.js';
import { probeChannel } from './relay/health-probe.js';
import { channelLogger, type ChannelLog } from './relay/channel-log.js';
import type { DestinationStream } from 'pino';
import { startTelemetry, type TelemetrySwitch } from './telemetry/index.js';
import { Counter, Gauge } from 'prom-client';
import { RequestLogWriter } from './request-logs/writer.js';
import { RequestLogsRepo } from './store/repos/request-logs.js';

/** Everything the routes need, built once per process. */
export interface Services {
  config: Config;
  store: Store;
  keys: KeysRepo;
  models: ModelsRepo;
  reservations: ReservationsRepo;
  authenticator: Authenticator;
  catalog: Catalog;
  /** The effective channels: the config file's and those stored at runtime (re-read every second). */
  channels: RuntimeChannels;
  channelsRepo: ChannelsRepo;
  /** Seals and opens stored channel credentials (MEDIAGATE_SECRET_KEY). */
  secretBox: SecretBox;
  usage: UsageRepo;
  /** Stored Responses API answers (previous_response_id, item_reference, GET /v1/responses/{id}). */
  responses: ResponsesRepo;
  /** Idempotency-Key claims and kept answers (the pipeline's idempotency step). */
  idempotency: Idempotency;
  ledger: UsageLedger;
  credit: CreditService;
  relay: Relay;
  /** Rate limits of keys and models (memory, or Redis when redis.url is set). */
  limits: RateLimits;
  upstream: UpstreamClient;
  metrics: Metrics;
  /** The request logs' writer (writes only while request_logs.enabled). */
  requestLogs: RequestLogWriter;
  /** Requests, errors and latency per channel over the last hour (the admin API reads them). */
  channelStats: ChannelStats;
  /** Each channel's health: taken out of rotation when failing, probed, put back. */
  health: ChannelHealth;
  /** The structured log of channel events (component "channels"). */
  channelLog: ChannelLog;
  /** The in-process simulator, when the config embeds one. */
  simulator: Simulator | null;
  /** Restarts the OpenTelemetry SDK on a config reload that changed the `telemetry` section. */
  telemetry: TelemetrySwitch;
  /** Video tasks: the service behind the routes and the poller (running unless noPoller). */
  tasks: TaskServices;
  /** List, /content, archive and webhooks of video tasks (workers running unless noPoller). */
  lifecycle: TaskLifecycle;
  /** Queued image requests whose client stopped waiting, settled when their provider tasks end (running unless noPoller). */
  imageWaits: ImageWaits;
  close(): Promise<void>;
}

export interface ServiceOptions {
  /** Skip starting the embedded simulator even if the config asks for it. */
  noSimulator?: boolean;
  /** Do not start the video task poller nor the image-wait worker (CLI commands, tests that drive pollers themselves). */
  noPoller?: boolean;
  /** Keep the embedded simulator's port and URL secret in this file across restarts (serve on SQLite). */
  simulatorStateFile?: string;
  /**
   * Where operational warnings go (Redis unreachable, a failed ledger write, a pool problem); as
   * `mediagate: <message>` lines on stderr when absent. Tests collect them instead.
   */
  warn?: (message: string) => void;
  /** Where MEDIAGATE_SECRET_KEY (and _PREVIOUS) are read; process.env when absent. */
  env?: Record<string, string | undefined>;
  /** Where the structured channel log goes (health events, channels a reload left unserved); stderr when absent. */
  logStream?: DestinationStream;
}

export async function createServices(config: Config, opts: ServiceOptions = {}): Promise<Services> {
  const warn = opts.warn ?? ((m: string) => process.stderr.write(`mediagate: ${m}\n`));
  let secretBox: SecretBox;
  try {
    secretBox = SecretBox.fromEnv(opts.env ?? process.env);
  } catch (err) {
    throw new GatewayConfigError((err as Error).message);
  }
  // The providers of providers.dir this config was validated with (docs/providers.md).
  const providers = providerSetOf(config);
  installProviders(providers);
  for (const r of providers.refused) warn(`provider manifest refused: ${r.error}`);
  let simulator: Simulator | null = null;
  if (config.simulator.embedded && !opts.noSimulator) {
    const simOpts = { videoSeconds: config.simulator.video_seconds, urlTtlS: config.simulator.url_ttl_s };
    // A configured port is kept as given; port 0 keeps the one of the last start when it can.
    // The simulator (its fake providers, the sample video) loads only when it runs: a gateway
    // without an embedded simulator never holds its code.
    simulator =
      config.simulator.port === 0 && opts.simulatorStateFile
        ? await (await import('./simulator/stable-address.js')).startStableSimulator(opts.simulatorStateFile, simOpts)
        : await (await import('./simulator/server.js')).startSimulator({ ...simOpts, port: config.simulator.port });
  }
  // A simulator channel without a base_url points at the in-process simulator.
  registerSecret(urlPassword(config.database.url));
  for (const ch of config.channels) {
    registerChannelSecrets(ch);
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
  const channelsRepo = new ChannelsRepo(store.db);
  const channels = new RuntimeChannels({ config, catalog }, channelsRepo, secretBox, (ch) => fillInstanceDefaults(ch, simulator), warn);
  try {
    await channels.start();
  } catch (err) {
    await store.close();
    await simulator?.close();
    throw new GatewayConfigError((err as Error).message);
  }
  const channelLog = channelLogger(config, opts.logStream);
  // Stored channels naming a model or provider type this config no longer has: said at start too.
  for (const p of channels.problems()) channelLog('warn', 'stored channel not fully served', { channel: p.channel, problem: p.problem });
  // Read at each use: a config reload replaces config.limits.
  const alerts = () => {
    const a = config.limits.budget_alerts;
    return a.url ? { url: a.url, thresholds: a.thresholds } : null;
  };
  const reservations = new ReservationsRepo(store.db, { groupCommit: store.dialect === 'sqlite', alerts });
  const usage = new UsageRepo(store.db, store.withoutLockWait, store.writeBatch);
  const responses = new ResponsesRepo(store.db);
  const idempotencyKeys = new IdempotencyRepo(store.db, { groupCommit: store.dialect === 'sqlite', readRaw: store.readRaw });
  const ledger = new UsageLedger(usage, (err) => warn(`usage ledger write failed: ${(err as Error).message}`));
  // An unreachable Redis is reported, not fatal: limits then hold per instance (docs/limits.md).
  const limits = await createRateLimits(config, warn);
  const upstream = new UpstreamClient({
    connectMs: config.relay.connect_timeout_ms,
    firstByteMs: config.relay.first_byte_timeout_ms,
    idleMs: config.relay.stream_idle_timeout_ms,
    maxConnections: config.relay.max_connections_per_origin,
    answerLimits: { bodyBytes: Math.floor(config.relay.max_body_mb * 1024 * 1024), eventBytes: Math.floor(config.relay.max_stream_event_mb * 1024 * 1024) },
  });
  const leasesRepo = new LeasesRepo(store.db, store.withoutLockWait);
  const leaseOptions = {
    ...DEFAULT_LEASE_OPTIONS,
    ttlMs: config.limits.credit_lease_ttl_s * 1000,
    flushMs: config.limits.credit_flush_ms,
    graceMs: Math.min(DEFAULT_LEASE_OPTIONS.graceMs, config.limits.credit_lease_ttl_s * 1000),
  };
  const leaseBook = config.limits.credit_leases
    ? new LeaseBook(leasesRepo, leaseOptions, (err) => process.stderr.write(`mediagate: credit lease write failed: ${(err as Error).message}\n`), () => ledger.flush())
    : null;
  // Budget windows are leased only where one process serves the database (a SQLite file, see
  // instance-lock.ts): near a limit no other instance's lease can then hold room a row needs.
  const budgetLeases =
    leaseBook && store.dialect === 'sqlite'
      ? new BudgetLeaseBook(new BudgetLeasesRepo(store.db, { alerts }, store.withoutLockWait), leaseBook.instance, { ...leaseOptions, ...DEFAULT_BUDGET_LEASE_OPTIONS }, (err) =>
          process.stderr.write(`mediagate: budget lease write failed: ${(err as Error).message}\n`),
        )
      : null;
  const credit = new CreditService(reservations, leaseBook ? { book: leaseBook, repo: leasesRepo } : null, { timeZone: () => config.limits.budget_time_zone, budgetLeases });
  const metrics = new Metrics();
  const requestLogs = new RequestLogWriter(new RequestLogsRepo(store.db), () => config.request_logs, (err) => warn(`writing a request log row failed: ${(err as Error).message}`));
  // Before the poller starts, so its first polls are traced too.
  for (const value of Object.values(config.telemetry.headers)) registerSecret(value);
  let telemetry = await startTelemetry(config, metrics.registry, warn);
  const telemetrySwitch: TelemetrySwitch = {
    async apply(next) {
      for (const value of Object.values(next.telemetry.headers)) registerSecret(value);
      await telemetry?.shutdown();
      telemetry = null;
      try {
        telemetry = await startTelemetry(next, metrics.registry, warn);
      } catch (err) {
        // The running settings again, and the reload reports why it did not apply.
        telemetry = await startTelemetry(config, metrics.registry).catch(() => null);
        throw new Error(`telemetry: ${(err as Error).message}`);
      }
    },
  };
  const channelStats = new ChannelStats();
  const health = new ChannelHealth(config.relay.health, (level, event, fields) => channelLog(level, event, fields));
  health.setProber(async (name) => {
    const channel = config.channels.find((c) => c.name === name);
    return channel ? probeChannel(upstream, channel) : null;
  });
  // Read at each tick: a reload replaces config.relay, a stored channel's change replaces config.channels.
  health.startScheduledTests(() => config.channels.filter((c) => c.enabled).map((c) => ({ name: c.name, interval_s: c.test_interval_s ?? config.relay.health.test_interval_s })));
  const relay = new Relay(
    config.relay,
    (target, failure) => metrics.upstreamFailures.inc({ channel: target.channel.name, kind: failure.kind }),
    (channel, outcome, ms, error) => {
      channelStats.record(channel, outcome !== 'error', ms);
      health.record(channel, outcome, error);
    },
    health,
  );
  watchMoneyAndBreakers(metrics, credit, relay);
  const tasks = createTaskServices({ config, store, catalog, relay, upstream, credit, ledger });
  const lifecycle = createTaskLifecycle({ config, store, tasks, upstream, registry: metrics.registry });
  const imageWaits = new ImageWaits({ config, repo: new ImageWaitsRepo(store.db, store.dialect), catalog, upstream, credit, ledger, log: taskLogger(config) });
  if (!opts.noPoller) {
    tasks.poller.start();
    lifecycle.start();
    imageWaits.start();
  }
  const holdSweep = setInterval(() => {
    credit.releaseAbandoned(config.limits.abandoned_hold_s * 1000).catch((err: unknown) => warn(`abandoned-hold sweep failed: ${(err as Error).message}`));
    responses.sweep().catch((err: unknown) => warn(`expired-responses sweep failed: ${(err as Error).message}`));
    if (config.request_logs.enabled) requestLogs.sweep().catch((err: unknown) => warn(`request-log retention sweep failed: ${(err as Error).message}`));
    idempotencyKeys.sweep().catch((err: unknown) => warn(`expired idempotency keys sweep failed: ${(err as Error).message}`));
    // Removed channels keep their credentials only while their tasks need them.
    channelsRepo
      .wipeSpentCredentials()
      .then((names) => names.length && channelLog('info', 'removed channels: credentials wiped (their tasks need them no more)', { channels: names }))
      .catch((err: unknown) => warn(`wiping removed channels' credentials failed: ${(err as Error).message}`));
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
    channels,
    channelsRepo,
    secretBox,
    usage,
    responses,
    // One process per SQLite file: claims in memory, kept answers written with the ledger's rows.
    idempotency: new Idempotency(store.dialect === 'sqlite' ? new LocalClaims(idempotencyKeys, ledger) : idempotencyKeys, { ttlMs: config.idempotency.ttl_s * 1000, waitMs: config.idempotency.wait_s * 1000 }),
    ledger,
    credit,
    limits,
    relay,
    upstream,
    metrics,
    requestLogs,
    channelStats,
    health,
    channelLog,
    simulator,
    telemetry: telemetrySwitch,
    tasks,
    lifecycle,
    imageWaits,
    async close() {
      clearInterval(holdSweep);
      channels.stop();
      health.close();
      await imageWaits.stop();
      await tasks.poller.stop();
      await lifecycle.stop();
      await credit.close();
      await ledger.close();
      await limits.close();
      await upstream.close();
      await store.close();
      await simulator?.close();
      await telemetry?.shutdown();
    },
  };
}

/** The credit settled (charged, owed) and each channel's breaker, as /metrics series (and OTLP metrics). */
function watchMoneyAndBreakers(metrics: Metrics, credit: CreditService, relay: Relay): void {
  const registers = [metrics.registry];
  const charged = new Counter({ name: 'mediagate_credit_charged_usd_total', help: 'Credit charged by settled holds on this instance, USD', registers });
  const owed = new Counter({ name: 'mediagate_credit_overage_usd_total', help: 'Part of settled charges neither hold nor balance covered (owed), USD', registers });
  credit.onSettled = (chargedMicros, overageMicros) => {
    if (chargedMicros > 0) charged.inc(chargedMicros / 1e6);
    if (overageMicros > 0) owed.inc(overageMicros / 1e6);
  };
  const STATES = { closed: 0, half_open: 1, open: 2 } as const;
  new Gauge({
    name: 'mediagate_channel_breaker_state',
    help: "A channel's circuit breaker on this instance: 0 closed, 1 half-open (next request probes), 2 open (skipped)",
    labelNames: ['channel'],
    registers,
    collect() {
      this.reset();
      for (const [channel, state] of relay.breakerStates()) this.set({ channel }, STATES[state]);
    },
  });
}

export class GatewayConfigError extends Error {}

/**
 * What a stored simulator channel leaves to the instance: the embedded simulator's address and a
 * key (any will do). Without an embedded simulator such a channel was refused when it was added.
 */
function fillInstanceDefaults(ch: ChannelConfig, simulator: Simulator | null): void {
  if (ch.type !== 'simulator') return;
  ch.api_key ??= 'simulator-key';
  if (!ch.base_url && simulator) ch.base_url = simulator.url;
}

/** The password of a connection URL (a database's), to keep it out of error messages. */
function urlPassword(url: string): string {
  try {
    return decodeURIComponent(new URL(url).password);
  } catch {
    return '';
  }
}

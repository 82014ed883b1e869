import type { Config } from '../config/schema.js';
import type { Catalog } from '../relay/catalog.js';
import type { ModelsRepo } from '../store/repos/models.js';
import type { Simulator } from '../simulator/server.js';
import { registerChannelSecrets } from '../http/redact.js';
import type { TelemetrySwitch } from '../telemetry/index.js';
import { providerSetOf } from '../config-file/loader.js';
import { installedProviders, installProviders } from '../providers/index.js';
import { ChannelConflictError, type ChannelProblem, type RuntimeChannels } from './channels.js';

/**
 * Sections a reload applies to a running instance. Everything else (listen address, database,
 * Redis, timeouts of the shared upstream client, …) is read once at start; a change there is
 * reported as needing a restart and the running value is kept.
 */
export const RELOADABLE_SECTIONS = ['channels', 'models', 'limits', 'providers', 'request_logs', 'telemetry'] as const;

export interface ReloadOutcome {
  /** Model ids now in the catalog that were not before, and the reverse. */
  added: string[];
  removed: string[];
  /** Sections that differ in the file but only take effect after a restart. */
  needsRestart: string[];
  /** Provider types loaded from providers.dir now in force, and the manifest files refused. */
  providers: { loaded: string[]; refused: { file: string; error: string; kept?: string }[] };
  /** Channels stored at runtime that serve less than they name under the new config (a model or type gone). */
  channelProblems: ChannelProblem[];
}

export interface ReloadTarget {
  config: Config;
  catalog: Catalog;
  models: ModelsRepo;
  simulator: Simulator | null;
  /** The channels added at runtime, merged after the file's (absent: the file's channels alone). */
  channels?: RuntimeChannels;
  /** Restarts telemetry when its section changed. */
  telemetry: TelemetrySwitch;
}

export class ReloadError extends Error {}

/**
 * Applies a freshly loaded config to a running instance. Everything that can fail (a simulator
 * channel with nowhere to point, the first-seen write) happens before the swap; the swap itself is
 * synchronous, so no request ever sees half a config. Requests already running keep the
 * CatalogModel (and channels) they started with.
 */
export async function applyConfig(target: ReloadTarget, next: Config): Promise<ReloadOutcome> {
  for (const ch of next.channels) {
    if (ch.type === 'simulator' && !ch.base_url) {
      if (!target.simulator) throw new ReloadError(`channel "${ch.name}": a simulator channel needs base_url unless simulator.embedded is true`);
      ch.base_url = target.simulator.url;
    }
  }
  let composed;
  try {
    composed = target.channels?.withFileChannels(next.channels);
  } catch (err) {
    if (err instanceof ChannelConflictError) throw new ReloadError(err.message);
    throw err;
  }
  const firstSeen = await target.models.ensureFirstSeen(Object.keys(next.models));
  for (const ch of next.channels) registerChannelSecrets(ch);

  const running = target.config;
  const providers = providerSetOf(next);
  // The SDK is stopped (what it buffered flushed) and started with the new section; spans of
  // requests running across the switch may be lost.
  if (JSON.stringify(next.telemetry) !== JSON.stringify(running.telemetry)) await target.telemetry.apply(next);
  const before = new Set(target.catalog.all().map((m) => m.id));
  // The loaded providers change with the channels that use them: a task read after this point
  // is read by the manifest now in force.
  installProviders(providers);
  running.channels = composed?.channels ?? next.channels;
  if (composed) target.channels!.adoptFileChannels(next.channels, composed);
  running.models = next.models;
  running.limits = next.limits;
  running.providers = next.providers;
  // Read at each request: whose bodies are logged, for how long.
  running.request_logs = next.request_logs;
  running.telemetry = next.telemetry;
  target.catalog.replace(running, firstSeen);
  const after = new Set(target.catalog.all().map((m) => m.id));

  const needsRestart = (Object.keys(next) as (keyof Config)[]).filter(
    (s) => !(RELOADABLE_SECTIONS as readonly string[]).includes(s) && JSON.stringify(next[s]) !== JSON.stringify(running[s]),
  );
  return {
    added: [...after].filter((id) => !before.has(id)),
    removed: [...before].filter((id) => !after.has(id)),
    needsRestart,
    providers: { loaded: [...providers.loaded.keys()], refused: [...providers.refused] },
    // Stored channels were checked against the models and types in force when they were added: a
    // reload that took one away is said, not left to fail quietly.
    channelProblems: target.channels?.problems() ?? [],
  };
}

export interface ReloadLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/**
 * What a reload did: `ok` when the config and every manifest of providers.dir loaded. A file that
 * does not load or apply leaves everything as it was (`error`); a refused manifest leaves only
 * itself out (or its previous version in force) while the rest of the reload applies.
 */
export interface ReloadReport {
  ok: boolean;
  /** Why the config did not load or apply (the running config is unchanged). */
  error?: string;
  added: string[];
  removed: string[];
  needs_restart: string[];
  providers: ReloadOutcome['providers'];
  /** Stored channels the new config leaves without a model or a provider type they name. */
  channel_problems: ChannelProblem[];
}

/**
 * Re-reads the config (SIGHUP, `mediagate reload`, the admin API, or a peer's reload message) and
 * applies it. Reloads run one after another, each reading the file anew.
 */
export class ConfigReloader {
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly target: ReloadTarget,
    private readonly load: () => Config,
    private readonly log: ReloadLog,
  ) {}

  reload(reason: string): Promise<ReloadReport> {
    const run = this.chain.then(() => this.run(reason));
    this.chain = run;
    return run;
  }

  private async run(reason: string): Promise<ReloadReport> {
    try {
      const outcome = await applyConfig(this.target, this.load());
      const { loaded, refused } = outcome.providers;
      this.log.info({ reason, added: outcome.added, removed: outcome.removed, ...(loaded.length ? { providers: loaded } : {}) }, 'config reloaded');
      for (const r of refused) {
        this.log.warn({ file: r.file, error: r.error, ...(r.kept ? { kept: r.kept } : {}) }, r.kept ? 'provider manifest refused; its previous version stays in force' : 'provider manifest refused');
      }
      for (const p of outcome.channelProblems) this.log.warn({ channel: p.channel, problem: p.problem }, 'stored channel not fully served after the reload');
      if (outcome.needsRestart.length) {
        this.log.warn({ sections: outcome.needsRestart }, 'config reload: these sections changed but take effect only after a restart; running values kept');
      }
      return { ok: refused.length === 0, added: outcome.added, removed: outcome.removed, needs_restart: outcome.needsRestart, providers: outcome.providers, channel_problems: outcome.channelProblems };
    } catch (err) {
      const error = (err as Error).message;
      this.log.warn({ reason, error }, 'config reload failed; keeping the running config');
      return { ok: false, error, added: [], removed: [], needs_restart: [], providers: { loaded: [...installedProviders().loaded.keys()], refused: [] }, channel_problems: [] };
    }
  }
}

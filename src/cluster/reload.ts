import type { Config } from '../config/schema.js';
import type { Catalog } from '../relay/catalog.js';
import type { ModelsRepo } from '../store/repos/models.js';
import type { Simulator } from '../simulator/server.js';
import { registerChannelSecrets } from '../http/redact.js';

/**
 * Sections a reload applies to a running instance. Everything else (listen address, database,
 * Redis, timeouts of the shared upstream client, …) is read once at start; a change there is
 * reported as needing a restart and the running value is kept.
 */
export const RELOADABLE_SECTIONS = ['channels', 'models', 'limits'] as const;

export interface ReloadOutcome {
  /** Model ids now in the catalog that were not before, and the reverse. */
  added: string[];
  removed: string[];
  /** Sections that differ in the file but only take effect after a restart. */
  needsRestart: string[];
}

export interface ReloadTarget {
  config: Config;
  catalog: Catalog;
  models: ModelsRepo;
  simulator: Simulator | null;
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
  const firstSeen = await target.models.ensureFirstSeen(Object.keys(next.models));
  for (const ch of next.channels) registerChannelSecrets(ch);

  const running = target.config;
  const before = new Set(target.catalog.all().map((m) => m.id));
  running.channels = next.channels;
  running.models = next.models;
  running.limits = next.limits;
  target.catalog.replace(running, firstSeen);
  const after = new Set(target.catalog.all().map((m) => m.id));

  const needsRestart = (Object.keys(next) as (keyof Config)[]).filter(
    (s) => !(RELOADABLE_SECTIONS as readonly string[]).includes(s) && JSON.stringify(next[s]) !== JSON.stringify(running[s]),
  );
  return { added: [...after].filter((id) => !before.has(id)), removed: [...before].filter((id) => !after.has(id)), needsRestart };
}

export interface ReloadLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/**
 * Re-reads the config (SIGHUP, `mediagate reload`, or a peer's reload message) and applies it.
 * Reloads run one after another, each reading the file anew. A file that does not load or apply
 * leaves the running config untouched: the instance keeps serving.
 */
export class ConfigReloader {
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly target: ReloadTarget,
    private readonly load: () => Config,
    private readonly log: ReloadLog,
  ) {}

  /** Resolves true when the new config is in effect. */
  reload(reason: string): Promise<boolean> {
    const run = this.chain.then(() => this.run(reason));
    this.chain = run;
    return run;
  }

  private async run(reason: string): Promise<boolean> {
    try {
      const outcome = await applyConfig(this.target, this.load());
      this.log.info({ reason, added: outcome.added, removed: outcome.removed }, 'config reloaded');
      if (outcome.needsRestart.length) {
        this.log.warn({ sections: outcome.needsRestart }, 'config reload: these sections changed but take effect only after a restart; running values kept');
      }
      return true;
    } catch (err) {
      this.log.warn({ reason, error: (err as Error).message }, 'config reload failed; keeping the running config');
      return false;
    }
  }
}

import type { ChannelConfig, Config } from '../config/schema.js';
import type { Catalog } from '../relay/catalog.js';
import type { ChannelRow, ChannelsRepo } from '../store/repos/channels.js';
import type { SecretBox } from '../store/secret-box.js';
import { registerChannelSecrets } from '../http/redact.js';
import { providerFor } from '../providers/index.js';

/** A stored channel that serves less than it names since the config changed, and why. */
export interface ChannelProblem {
  channel: string;
  problem: string;
}

/**
 * Why a channel serves less than it names: a provider type no longer loaded (a manifest gone from
 * providers.dir), models no longer declared under models; null when it serves all it names.
 */
export function channelProblem(ch: ChannelConfig, models: Record<string, unknown>): string | null {
  const parts: string[] = [];
  if (!providerFor(ch.type)) parts.push(`its provider type "${ch.type}" is no longer loaded (not built in, and no manifest of providers.dir declares it): no request can reach its provider`);
  const gone = ch.models.filter((m) => !Object.hasOwn(models, m));
  if (gone.length) {
    const left = ch.models.filter((m) => Object.hasOwn(models, m));
    parts.push(`${gone.length > 1 ? 'models' : 'model'} ${gone.join(', ')} ${gone.length > 1 ? 'are' : 'is'} no longer declared under models, so ${left.length ? `it serves only ${left.join(', ')}` : 'it serves nothing'}`);
  }
  return parts.length ? `${parts.join('; ')}. Declare them again and reload, or change the channel (PATCH /admin/api/channels/${ch.name}).` : null;
}

// The effective channel list of an instance: the config file's channels (each possibly switched on
// or off by a stored override) followed by the channels stored in the database. Every instance
// re-reads the stored rows on a cluster message and every REREAD_MS anyway (a missed message, no
// Redis), and swaps config.channels and the catalog in one step when they changed. Channel objects
// are never changed in place: a request or poll holding one keeps what it started with.

export const REREAD_MS = 1000;

export type ChannelSource = 'config' | 'api';

/** A stored channel's body: its fields but the name and the credentials. */
export type ChannelBody = Omit<ChannelConfig, 'name' | 'api_key' | 'api_secret' | 'enabled'>;
export interface ChannelCredentials {
  api_key?: string;
  api_secret?: string;
}

export class ChannelConflictError extends Error {}

/** An effective channel list and where each of its channels in force comes from. */
export interface Composed {
  channels: ChannelConfig[];
  sources: Map<string, ChannelSource>;
}

/** A stored row as a channel (credentials opened); throws when its credentials do not open. */
export function channelOfRow(row: ChannelRow, box: SecretBox): ChannelConfig {
  const body = JSON.parse(row.body) as ChannelBody;
  const creds: ChannelCredentials = row.credentials ? (JSON.parse(box.open(row.credentials, row.name)) as ChannelCredentials) : {};
  return { ...body, name: row.name, ...creds, enabled: row.enabled === 1 && row.deleted_at === 0 };
}

export interface RuntimeChannelsTarget {
  config: Config;
  catalog: Catalog;
}

export class RuntimeChannels {
  private fileChannels: ChannelConfig[];
  private rows: ChannelRow[] = [];
  private seen = '';
  /** Opened stored channels by name and the `updated_at` they were opened at (no decrypt per re-read). */
  private opened = new Map<string, { at: number; credentials: string | null; channel: ChannelConfig }>();
  private sources = new Map<string, ChannelSource>();
  private chain: Promise<unknown> = Promise.resolve();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly target: RuntimeChannelsTarget,
    private readonly repo: ChannelsRepo,
    private readonly box: SecretBox,
    /** Fills what a channel leaves to the instance (the embedded simulator's address). */
    private readonly prepare: (channel: ChannelConfig) => void,
    private readonly warn: (message: string) => void,
  ) {
    this.fileChannels = target.config.channels;
  }

  /** Loads the stored channels (refusing a name also in the config file), seals stale credentials anew, and re-reads every REREAD_MS. */
  async start(): Promise<void> {
    this.rows = await this.repo.all();
    this.swap(this.compose(this.fileChannels, this.rows));
    this.seen = fingerprint(this.rows);
    await this.reseal();
    let lastWarn = 0;
    this.timer = setInterval(
      () =>
        void this.refresh().catch((err: Error) => {
          // A database outage would otherwise say so every second: once a minute is enough.
          if (Date.now() - lastWarn < 60_000) return;
          lastWarn = Date.now();
          this.warn(`re-reading the stored channels failed (the channels in force stay): ${err.message}`);
        }),
      REREAD_MS,
    );
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Re-reads the stored channels and applies them if they changed (runs one after another). */
  refresh(): Promise<void> {
    const run = this.chain.then(async () => {
      const rows = await this.repo.all();
      const print = fingerprint(rows);
      if (print === this.seen) return;
      let next: Composed;
      try {
        next = this.compose(this.fileChannels, rows);
      } catch (err) {
        // A stored name the config file took since: the file's channel stays, the stored one is left out.
        this.warn((err as Error).message);
        next = this.compose(this.fileChannels, rows.filter((r) => !this.fileChannels.some((c) => c.name === r.name) || r.kind === 'override'));
      }
      this.rows = rows;
      this.seen = print;
      this.swap(next);
    });
    this.chain = run.catch(() => undefined);
    return run;
  }

  /**
   * The effective list for a config file's channels (a reload): refused with ChannelConflictError
   * when a channel of the file has the name of a stored one.
   */
  withFileChannels(fileChannels: ChannelConfig[]): Composed {
    return this.compose(fileChannels, this.rows);
  }

  /** Records the file's channels a reload put in force (with withFileChannels' answer). */
  adoptFileChannels(fileChannels: ChannelConfig[], composed: Composed): void {
    this.fileChannels = fileChannels;
    this.sources = composed.sources;
  }

  /** The stored channels in force that serve less than they name under the running config. */
  problems(): ChannelProblem[] {
    const out: ChannelProblem[] = [];
    for (const ch of this.target.config.channels) {
      if (this.sources.get(ch.name) !== 'api') continue;
      const problem = channelProblem(ch, this.target.config.models);
      if (problem) out.push({ channel: ch.name, problem });
    }
    return out;
  }

  /** Where a channel in force comes from; undefined for none (or a removed one kept for its tasks). */
  sourceOf(name: string): ChannelSource | undefined {
    return this.sources.get(name);
  }

  /** The config file's channel of that name, as the file has it (before any override). */
  fileChannel(name: string): ChannelConfig | undefined {
    return this.fileChannels.find((c) => c.name === name);
  }

  private compose(fileChannels: ChannelConfig[], rows: ChannelRow[]): Composed {
    const fileNames = new Set(fileChannels.map((c) => c.name));
    const overrides = new Map(rows.filter((r) => r.kind === 'override').map((r) => [r.name, r.enabled === 1]));
    const out: ChannelConfig[] = [];
    const sources = new Map<string, ChannelSource>();
    for (const ch of fileChannels) {
      const on = overrides.get(ch.name);
      out.push(on === undefined || on === ch.enabled ? ch : { ...ch, enabled: on });
      sources.set(ch.name, 'config');
    }
    for (const row of rows) {
      if (row.kind !== 'stored') continue;
      if (fileNames.has(row.name)) {
        // A removed stored channel gives way to the file's; a live one is a conflict.
        if (row.deleted_at !== 0) continue;
        throw new ChannelConflictError(
          `channel "${row.name}" is in the config file and was also added at runtime (admin API or CLI); remove one of them (npx mediagate channels remove ${row.name}, or rename it in the file)`,
        );
      }
      const channel = this.open(row);
      if (!channel) continue;
      out.push(channel);
      if (row.deleted_at === 0) sources.set(row.name, 'api');
    }
    return { channels: out, sources };
  }

  private open(row: ChannelRow): ChannelConfig | undefined {
    const cached = this.opened.get(row.name);
    if (cached && cached.at === row.updated_at && cached.credentials === row.credentials) return cached.channel;
    try {
      const channel = channelOfRow(row, this.box);
      this.prepare(channel);
      registerChannelSecrets(channel);
      this.opened.set(row.name, { at: row.updated_at, credentials: row.credentials, channel });
      return channel;
    } catch (err) {
      this.warn(`stored channel "${row.name}" left out: ${(err as Error).message}`);
      return undefined;
    }
  }

  private swap({ channels, sources }: Composed): void {
    this.sources = sources;
    this.target.config.channels = channels;
    this.target.catalog.rechannel(this.target.config);
  }

  /** Credentials sealed with MEDIAGATE_SECRET_KEY_PREVIOUS are sealed anew with MEDIAGATE_SECRET_KEY. */
  private async reseal(): Promise<void> {
    for (const row of this.rows) {
      if (!row.credentials || !this.box.isStale(row.credentials)) continue;
      try {
        await this.repo.reseal(row.name, row.credentials, this.box.seal(this.box.open(row.credentials, row.name), row.name));
      } catch (err) {
        this.warn(`stored channel "${row.name}": credentials not sealed anew: ${(err as Error).message}`);
      }
    }
  }
}

function fingerprint(rows: ChannelRow[]): string {
  return rows.map((r) => `${r.name}\u0000${r.kind}\u0000${r.updated_at}\u0000${r.enabled}\u0000${r.deleted_at}\u0000${r.credentials ?? ''}`).join('\u0001');
}

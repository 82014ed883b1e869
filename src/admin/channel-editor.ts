import type { ChannelConfig, Config } from '../config/schema.js';
import type { ChannelsRepo } from '../store/repos/channels.js';
import { SecretKeyError, type SecretBox } from '../store/secret-box.js';
import { ConfigError, validateChannel } from '../config-file/loader.js';
import { channelOfRow, type ChannelBody } from '../cluster/channels.js';
import { maskUrl } from './config-view.js';
import { adminErrors } from './errors.js';

// Adds, changes and removes the channels stored at runtime, for the admin API and the CLI alike.
// A channel is checked exactly like one of the config file (schema, provider type, settings, the
// models it names), its credentials are sealed before they reach the store, and a channel of the
// config file is read-only but for its enabled switch (kept as a stored override).

export interface ChannelEditorDeps {
  /** The running (or, for the CLI, loaded) config: its models and the config file's channels. */
  config: Pick<Config, 'models'>;
  /** The config file's channels, as the file has them. */
  fileChannel(name: string): ChannelConfig | undefined;
  repo: ChannelsRepo;
  box: SecretBox;
  /** Whether a `simulator` channel without base_url has an embedded simulator to point at. */
  hasEmbeddedSimulator: boolean;
}

/** Fields that may be cleared in a change by sending null. */
const CLEARABLE = new Set(['base_url', 'api_key', 'api_secret', 'settings', 'upstream_format', 'allow_private_network', 'test_interval_s']);

/** What the audit log keeps of a change: field names and values, credentials only as "changed". */
export function auditDetail(input: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(input)) {
    if (k === 'api_key' || k === 'api_secret') out[k] = v === null ? 'cleared' : 'changed';
    else if (k === 'base_url' && typeof v === 'string') out[k] = maskUrl(v);
    else out[k] = v;
  }
  return out;
}

export class ChannelEditor {
  constructor(private readonly d: ChannelEditorDeps) {}

  async create(input: Record<string, unknown>): Promise<ChannelConfig> {
    const name = typeof input.name === 'string' ? input.name : '';
    if (name && this.d.fileChannel(name)) {
      throw adminErrors.conflict(`The channel "${name}" is defined in the config file; choose another name (a name may be used by the file or at runtime, not both).`, 'channel_exists');
    }
    const channel = this.checked(input, 'channel');
    const ok = await this.d.repo.create({ name: channel.name, kind: 'stored', enabled: channel.enabled ? 1 : 0, ...this.sealed(channel) });
    if (!ok) throw adminErrors.conflict(`A channel named "${channel.name}" already exists; change it with PATCH, or remove it first.`, 'channel_exists');
    return channel;
  }

  /** Applies the fields sent (null clears an optional one); a config file's channel takes only `enabled`. */
  async update(name: string, patch: Record<string, unknown>): Promise<ChannelConfig> {
    if (patch.name !== undefined && patch.name !== name) throw adminErrors.invalid('name: a channel cannot be renamed; add one under the new name and remove this one.');
    const file = this.d.fileChannel(name);
    if (file) {
      const other = Object.keys(patch).filter((k) => k !== 'enabled' && k !== 'name');
      if (other.length) {
        throw adminErrors.conflict(
          `The channel "${name}" is defined in the config file and is read-only here (${other.join(', ')} sent); change it in the file and reload. Only enabled can be switched at runtime.`,
          'channel_read_only',
        );
      }
      if (typeof patch.enabled !== 'boolean') throw adminErrors.invalid('enabled: must be true or false');
      // Switched back to the file's value: the file decides again (a later edit of it takes effect).
      if (patch.enabled === file.enabled) await this.d.repo.clearOverride(name);
      else await this.d.repo.setOverride(name, patch.enabled);
      return { ...file, enabled: patch.enabled };
    }
    const row = await this.d.repo.get(name);
    if (!row || row.kind !== 'stored' || row.deleted_at !== 0) throw adminErrors.notFound(`The channel ${JSON.stringify(name)}`);
    let current: ChannelConfig;
    try {
      current = channelOfRow(row, this.d.box);
    } catch (err) {
      throw adminErrors.conflict(`The channel "${name}" cannot be changed on this instance: ${(err as Error).message}`, 'secret_key_missing');
    }
    const merged: Record<string, unknown> = { ...current };
    for (const [k, v] of Object.entries(patch)) {
      if (v === null && CLEARABLE.has(k)) delete merged[k];
      else merged[k] = v;
    }
    // model_map entries of models no longer served go with them.
    if (Array.isArray(patch.models) && patch.model_map === undefined && merged.model_map && typeof merged.model_map === 'object') {
      merged.model_map = Object.fromEntries(Object.entries(merged.model_map).filter(([m]) => (patch.models as unknown[]).includes(m)));
    }
    const channel = this.checked(merged, `channel "${name}"`);
    const credentialsSent = 'api_key' in patch || 'api_secret' in patch;
    const sealed = this.sealed(channel, credentialsSent ? undefined : row.credentials);
    if (!(await this.d.repo.update(name, { ...sealed, enabled: channel.enabled ? 1 : 0 }))) throw adminErrors.notFound(`The channel ${JSON.stringify(name)}`);
    return channel;
  }

  /**
   * Removes a stored channel. Its credentials are wiped at once unless its tasks still need them
   * (open, or a video link still valid): then the minute sweep wipes them once they do not.
   */
  async remove(name: string): Promise<{ credentials: 'wiped' | 'kept_for_tasks' | 'none' }> {
    if (this.d.fileChannel(name)) {
      throw adminErrors.conflict(`The channel "${name}" is defined in the config file and cannot be removed here; remove it from the file and reload, or disable it (enabled: false).`, 'channel_read_only');
    }
    const row = await this.d.repo.get(name);
    if (!(await this.d.repo.remove(name))) throw adminErrors.notFound(`The channel ${JSON.stringify(name)}`);
    if (!row?.credentials) return { credentials: 'none' };
    return { credentials: (await this.d.repo.wipeSpentCredentials(Date.now(), name)).length ? 'wiped' : 'kept_for_tasks' };
  }

  private checked(input: Record<string, unknown>, source: string): ChannelConfig {
    let channel: ChannelConfig;
    try {
      channel = validateChannel(input, this.d.config.models, source);
    } catch (err) {
      if (err instanceof ConfigError) throw adminErrors.invalid(err.message);
      throw err;
    }
    if (channel.type === 'simulator' && !channel.base_url && !this.d.hasEmbeddedSimulator) {
      throw adminErrors.invalid(`${source}: base_url: required for a simulator channel unless simulator.embedded is true`);
    }
    return channel;
  }

  /** The row's body and sealed credentials; `keep` is the stored credentials to leave as they are. */
  private sealed(channel: ChannelConfig, keep?: string | null): { body: string; credentials: string | null } {
    const { name, api_key, api_secret, enabled: _enabled, ...rest } = channel;
    const body: ChannelBody = rest;
    if (keep !== undefined) return { body: JSON.stringify(body), credentials: keep };
    const creds = { ...(api_key !== undefined ? { api_key } : {}), ...(api_secret !== undefined ? { api_secret } : {}) };
    if (!Object.keys(creds).length) return { body: JSON.stringify(body), credentials: null };
    try {
      return { body: JSON.stringify(body), credentials: this.d.box.seal(JSON.stringify(creds), name) };
    } catch (err) {
      if (err instanceof SecretKeyError) throw adminErrors.conflict(err.message, 'secret_key_missing');
      throw err;
    }
  }
}

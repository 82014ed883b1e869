import { readFileSync } from 'node:fs';
import { interpolate } from '../config-file/loader.js';
import { parseCommand, UsageError, type CommandSpec } from './args.js';
import type { Config } from '../config/schema.js';
import type { Store } from '../store/db.js';
import { createChannelEditor } from '../admin/index.js';
import { auditDetail } from '../admin/channel-editor.js';
import { ChannelsRepo } from '../store/repos/channels.js';
import { SecretBox } from '../store/secret-box.js';
import type { ChannelBody } from '../cluster/channels.js';
import { parse as parseYaml } from 'yaml';
import { CONFIG_OPTION, JSON_OPTION, CommandError, adminOn, asCommand, configFor, out, tellInstances, withStore } from './common.js';

// `mediagate channels …`: channels added at runtime (stored, encrypted credentials) and the
// enable/disable override of the config file's channels.

export const channelFields = {
  file: { type: 'string', arg: 'FILE', help: 'a YAML or JSON file holding the channel\'s fields, as one entry of a config file\'s channels (${VAR} filled from the environment); the options below win over it' },
  type: { type: 'string', arg: 'TYPE', help: 'provider type (npx mediagate providers list)' },
  'base-url': { type: 'string', arg: 'URL', help: 'the provider\'s base URL' },
  'api-key-env': { type: 'string', arg: 'VAR', help: 'the environment variable holding the API key (never the key itself on the command line)' },
  'api-secret-env': { type: 'string', arg: 'VAR', help: 'the environment variable holding the second credential (Kling: the secret key)' },
  models: { type: 'string', arg: 'a,b', help: 'the model ids it serves (each declared under models in the config)' },
  map: { type: 'string', arg: 'model=upstream,…', help: 'upstream model names, per model id' },
  priority: { type: 'string', arg: 'N', help: 'lower is tried first (default 0)' },
  weight: { type: 'string', arg: 'N', help: 'share among channels of one priority (default 1)' },
  'test-interval': { type: 'string', arg: 'S', help: 'seconds between scheduled tests of this channel (nothing billable); 0 = none; default relay.health.test_interval_s' },
} as const;

export const channelsList = { name: 'channels list', summary: 'List the channels: the config file\'s (read-only) and those added at runtime.', options: { ...JSON_OPTION, ...CONFIG_OPTION } } satisfies CommandSpec;
export const channelsAdd = {
  name: 'channels add',
  summary: 'Add a channel at runtime; running instances serve it within 2 s. Credentials are sealed with $MEDIAGATE_SECRET_KEY.',
  args: ['NAME'],
  options: { ...channelFields, disabled: { type: 'boolean', help: 'add it switched off' }, ...JSON_OPTION, ...CONFIG_OPTION },
} satisfies CommandSpec;
export const channelsUpdate = {
  name: 'channels update',
  summary: 'Change a channel added at runtime: only the options given change.',
  args: ['NAME'],
  options: { ...channelFields, ...JSON_OPTION, ...CONFIG_OPTION },
} satisfies CommandSpec;
export const channelsEnable = { name: 'channels enable', summary: 'Put a channel (also one of the config file) back into rotation on every instance.', args: ['NAME'], options: { ...CONFIG_OPTION } } satisfies CommandSpec;
export const channelsDisable = { name: 'channels disable', summary: 'Take a channel (also one of the config file) out of rotation on every instance; its open tasks finish.', args: ['NAME'], options: { ...CONFIG_OPTION } } satisfies CommandSpec;
export const channelsRemove = { name: 'channels remove', summary: 'Remove a channel added at runtime; its open tasks still finish through it.', args: ['NAME'], options: { ...CONFIG_OPTION } } satisfies CommandSpec;

export type ChannelValues = { [K in keyof typeof channelFields]?: string };

/** The channel fields the options give (a --file's first, the options over them). */
export function channelInput(spec: CommandSpec, values: ChannelValues): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  if (values.file) {
    let parsed: unknown;
    try {
      parsed = parseYaml(readFileSync(values.file, 'utf8'));
    } catch (err) {
      throw new UsageError(`${spec.name}: --file ${values.file}: ${(err as Error).message.split('\n')[0]}`, spec);
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new UsageError(`${spec.name}: --file ${values.file}: must hold one channel's fields as a mapping`, spec);
    Object.assign(input, interpolate(parsed, process.env, '', values.file));
  }
  if (values.type !== undefined) input.type = values.type;
  if (values['base-url'] !== undefined) input.base_url = values['base-url'];
  for (const [option, field] of [['api-key-env', 'api_key'], ['api-secret-env', 'api_secret']] as const) {
    const name = values[option];
    if (name === undefined) continue;
    const v = process.env[name];
    if (!v) throw new UsageError(`${spec.name}: --${option}: the environment variable ${name} is not set`, spec);
    input[field] = v;
  }
  if (values.models !== undefined) input.models = values.models.split(',').map((m) => m.trim()).filter(Boolean);
  if (values.map !== undefined) {
    input.model_map = Object.fromEntries(
      values.map.split(',').filter(Boolean).map((pair) => {
        const i = pair.indexOf('=');
        if (i <= 0 || i === pair.length - 1) throw new UsageError(`${spec.name}: --map: each entry is model=upstream, got "${pair}"`, spec);
        return [pair.slice(0, i).trim(), pair.slice(i + 1).trim()];
      }),
    );
  }
  for (const n of ['priority', 'weight'] as const) {
    const v = values[n];
    if (v === undefined) continue;
    if (!/^-?\d+$/.test(v)) throw new UsageError(`${spec.name}: --${n} must be a whole number, got "${v}"`, spec);
    input[n] = Number(v);
  }
  const interval = values['test-interval'];
  if (interval !== undefined) {
    if (!/^\d{1,5}$/.test(interval) || Number(interval) > 86400) throw new UsageError(`${spec.name}: --test-interval must be whole seconds from 0 (none) to 86400, got "${interval}"`, spec);
    input.test_interval_s = Number(interval);
  }
  return input;
}

/** The channel editor over the command's store; a malformed $MEDIAGATE_SECRET_KEY is a CommandError. */
export function channelEditorOn(config: Config, s: Store) {
  let secretBox: SecretBox;
  try {
    secretBox = SecretBox.fromEnv(process.env);
  } catch (err) {
    throw new CommandError((err as Error).message);
  }
  return createChannelEditor({ config, store: s, secretBox });
}

export function channelLine(c: { name: string; source: string; type: string; enabled: boolean; priority: number; weight: number; models: string[]; api_key?: string }): string {
  return `${c.name}  ${c.source}  ${c.type}  ${c.enabled ? 'enabled' : 'disabled'}  priority=${c.priority}  weight=${c.weight}  models=${c.models.join(',')}${c.api_key ? '  api_key=set' : ''}`;
}

export async function channelsListCommand(argv: string[]): Promise<void> {
  const { values } = parseCommand(channelsList, argv);
  const { config } = configFor(values);
  const rows = await withStore(config, (s) => new ChannelsRepo(s.db).all(), { mustExist: true });
  const overrides = new Map(rows.filter((r) => r.kind === 'override').map((r) => [r.name, r.enabled === 1]));
  const list = [
    ...config.channels.map((c) => ({ name: c.name, source: 'config', type: c.type, enabled: overrides.get(c.name) ?? c.enabled, priority: c.priority, weight: c.weight, models: c.models, ...(c.api_key ? { api_key: 'set' } : {}) })),
    ...rows
      .filter((r) => r.kind === 'stored' && r.deleted_at === 0)
      .map((r) => {
        const body = JSON.parse(r.body) as ChannelBody;
        return { name: r.name, source: 'api', type: body.type, enabled: r.enabled === 1, priority: body.priority, weight: body.weight, models: body.models, ...(r.credentials ? { api_key: 'set' } : {}) };
      }),
  ];
  if (values.json) return out(JSON.stringify(list));
  if (!list.length) return out('No channels.');
  for (const c of list) out(channelLine(c));
}

export async function channelsAddCommand(argv: string[]): Promise<void> {
  const { values, positionals } = parseCommand(channelsAdd, argv);
  const { config } = configFor(values);
  const input = { ...channelInput(channelsAdd, values), name: positionals[0], ...(values.disabled ? { enabled: false } : {}) };
  const channel = await withStore(
    config,
    (s) =>
      asCommand(async () => {
        const made = await channelEditorOn(config, s).create(input);
        await adminOn(config, s).record('channel.create', made.name, auditDetail(input));
        return made;
      }),
    { mustExist: true },
  );
  const view = { name: channel.name, source: 'api', type: channel.type, enabled: channel.enabled, priority: channel.priority, weight: channel.weight, models: channel.models, ...(channel.api_key ? { api_key: 'set' } : {}) };
  out(values.json ? JSON.stringify(view) : `Added ${channelLine(view)}`);
  await tellInstances(config, 'channels', { name: channel.name });
}

export async function channelsUpdateCommand(argv: string[]): Promise<void> {
  const { values, positionals } = parseCommand(channelsUpdate, argv);
  const { config } = configFor(values);
  const input = channelInput(channelsUpdate, values);
  if (!Object.keys(input).length) throw new UsageError(`channels update: needs at least one of ${Object.keys(channelFields).map((o) => `--${o}`).join(', ')}`, channelsUpdate);
  const name = positionals[0];
  const channel = await withStore(
    config,
    (s) =>
      asCommand(async () => {
        const changed = await channelEditorOn(config, s).update(name, input);
        await adminOn(config, s).record('channel.update', name, auditDetail(input));
        return changed;
      }),
    { mustExist: true },
  );
  const view = { name: channel.name, source: 'api', type: channel.type, enabled: channel.enabled, priority: channel.priority, weight: channel.weight, models: channel.models, ...(channel.api_key ? { api_key: 'set' } : {}) };
  out(values.json ? JSON.stringify(view) : `Updated ${channelLine(view)}`);
  await tellInstances(config, 'channels', { name });
}

export function channelSwitchCommand(spec: typeof channelsEnable | typeof channelsDisable | typeof channelsRemove, what: 'enable' | 'disable' | 'remove') {
  return async (argv: string[]): Promise<void> => {
    const { values, positionals } = parseCommand(spec, argv);
    const { config } = configFor(values);
    const name = positionals[0];
    let credentials = 'none';
    await withStore(
      config,
      (s) =>
        asCommand(async () => {
          const editor = channelEditorOn(config, s);
          if (what === 'remove') credentials = (await editor.remove(name)).credentials;
          else await editor.update(name, { enabled: what === 'enable' });
          await adminOn(config, s).record(`channel.${what}`, name, what === 'remove' ? { credentials } : undefined);
        }),
      { mustExist: true },
    );
    const wiped = credentials === 'wiped' ? ' Its credentials are wiped.' : credentials === 'kept_for_tasks' ? ' Its credentials are kept, sealed, until its tasks no longer need them.' : '';
    out(what === 'remove' ? `Removed channel ${name}; its open tasks still finish through it.${wiped}` : `Channel ${name} ${what}d.`);
    await tellInstances(config, 'channels', { name });
  };
}

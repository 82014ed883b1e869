import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { Value } from '@sinclair/typebox/value';
import { ChannelSchema, ConfigSchema, type Config } from '../config/schema.js';
import { priceRuleProblem } from '../config/price-rule.js';
import { embeddedDefault } from './defaults.js';
import { installedProviders, isBuiltInType, NO_PROVIDERS, providerFor, providerTypes, type ProviderSet } from '../providers/index.js';
import type { ChannelSetting } from '../providers/provider.js';
import { loadProviderDir, ProviderDirError } from '../providers/kit/dir.js';
import { proxyEntryProblem } from '../http/forwarded.js';
import { escapeUnsafe, unsafeNameProblem } from '../http/names.js';
import { isTimeZone } from '../limits/budget-window.js';
import { isLoopbackHost } from '../tasks/webhooks/subscription.js';

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

/**
 * Replaces `${VAR}` and `${VAR:-fallback}` inside every string value of the parsed file. An unset
 * variable without a fallback is an error naming the file, the field and the variable.
 */
export function interpolate(value: unknown, env: Env, path = '', source = 'config'): unknown {
  if (typeof value === 'string') {
    return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g, (_m, name: string, fallback?: string) => {
      const v = env[name];
      if (v !== undefined && v !== '') return v;
      if (fallback !== undefined) return fallback;
      throw new ConfigError(`${source}: ${path || '(root)'}: environment variable ${name} is not set (set it, or write \${${name}:-default} for a fallback)`);
    });
  }
  if (Array.isArray(value)) return value.map((v, i) => interpolate(v, env, `${path}[${i}]`, source));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = interpolate(v, env, path ? `${path}.${k}` : k, source);
    return out;
  }
  return value;
}

/**
 * A relative `sqlite:` path in a config file is relative to that file, so the server and every CLI
 * command reach the same database whatever directory they run in (docs/configuration.md).
 */
function anchorSqlitePath(raw: Record<string, unknown>, configPath: string): void {
  const db = raw.database as Record<string, unknown> | undefined;
  const url = db?.url;
  if (typeof url !== 'string' || !url.startsWith('sqlite:')) return;
  const target = url.slice('sqlite:'.length).replace(/^\/\//, '');
  if (!target || target === ':memory:' || isAbsolute(target)) return;
  db!.url = `sqlite:${resolve(dirname(resolve(configPath)), target)}`;
}

/** A relative `storage.dir` is relative to the config file too, like a relative SQLite path. */
function anchorStorageDir(raw: Record<string, unknown>, configPath: string): void {
  const storage = raw.storage as Record<string, unknown> | undefined;
  if (storage && typeof storage.dir === 'string' && storage.dir && !isAbsolute(storage.dir)) storage.dir = resolve(dirname(resolve(configPath)), storage.dir);
}

/** A relative `providers.dir` is relative to the config file too. */
function anchorProvidersDir(raw: Record<string, unknown>, configPath: string): void {
  const providers = raw.providers as Record<string, unknown> | undefined;
  if (providers && typeof providers.dir === 'string' && providers.dir && !isAbsolute(providers.dir)) providers.dir = resolve(dirname(resolve(configPath)), providers.dir);
}

/** Why a value failed its schema: a union of literals lists what it may be. */
function schemaMessage(error: { message: string; schema: unknown; value: unknown }): string {
  if (error.message.startsWith('Unexpected property')) return 'unknown field';
  const anyOf = (error.schema as { anyOf?: Array<{ const?: unknown }> } | undefined)?.anyOf;
  if (anyOf && anyOf.length && anyOf.every((s) => s.const !== undefined)) {
    const got = error.value === undefined ? 'nothing' : JSON.stringify(error.value);
    return `must be one of ${anyOf.map((s) => String(s.const)).join(', ')} (got ${got})`;
  }
  return error.message;
}

function pointerToPath(pointer: string): string {
  return pointer
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((acc, part) => (/^\d+$/.test(part) ? `${acc}[${part}]` : acc ? `${acc}.${part}` : part), '');
}

function applyEnvOverrides(raw: Record<string, unknown>, env: Env): void {
  const section = (name: string): Record<string, unknown> => {
    const s = raw[name];
    if (s && typeof s === 'object' && !Array.isArray(s)) return s as Record<string, unknown>;
    const fresh: Record<string, unknown> = {};
    raw[name] = fresh;
    return fresh;
  };
  if (env.PORT !== undefined && env.PORT !== '') {
    const port = Number(env.PORT);
    if (!Number.isInteger(port)) throw new ConfigError(`config: PORT: must be an integer, got "${env.PORT}"`);
    section('server').port = port;
  }
  if (env.HOST) section('server').host = env.HOST;
  if (env.DATABASE_URL) section('database').url = env.DATABASE_URL;
  if (env.REDIS_URL) section('redis').url = env.REDIS_URL;
  if (env.LOG_LEVEL) section('log').level = env.LOG_LEVEL;
  // The two settings a newcomer reaches for first: the console, and webhooks to a local receiver.
  const flag = (name: string): boolean | undefined => {
    const v = env[name];
    if (v === undefined || v === '') return undefined;
    if (/^(true|1|yes|on)$/i.test(v)) return true;
    if (/^(false|0|no|off)$/i.test(v)) return false;
    throw new ConfigError(`config: ${name}: must be true or false, got "${v}"`);
  };
  const admin = flag('MEDIAGATE_ADMIN_ENABLED');
  if (admin !== undefined) section('admin').enabled = admin;
  const insecure = flag('MEDIAGATE_WEBHOOKS_ALLOW_INSECURE');
  if (insecure !== undefined) section('webhooks').allow_insecure = insecure;
}

/**
 * `extends: embedded`: the file's fields laid over the embedded default. Mappings merge field by
 * field; `channels` are added to the default's (a channel of the same name replaces the default's);
 * any other list, and every plain value, replaces the default's.
 */
function overEmbedded(file: Record<string, unknown>, env: Env, path: string): Record<string, unknown> {
  const base = file.extends;
  delete file.extends;
  if (base !== 'embedded') throw new ConfigError(`${path}: extends: must be "embedded" (the embedded default is the only base), got ${JSON.stringify(base)}`);
  const merged = merge(embeddedDefault(env), file) as Record<string, unknown>;
  if (Array.isArray(file.channels)) {
    const own = file.channels as Array<{ name?: unknown }>;
    const names = new Set(own.map((c) => c?.name));
    const inherited = (embeddedDefault(env).channels as Array<{ name?: unknown }>).filter((c) => !names.has(c.name));
    merged.channels = [...inherited, ...own];
  }
  return merged;
}

function merge(base: unknown, over: unknown): unknown {
  const isMap = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);
  if (!isMap(base) || !isMap(over)) return over === undefined ? base : over;
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = merge(base[k], v);
  return out;
}

/** Validates a parsed (and interpolated) config object, filling defaults. Throws ConfigError naming the field. */
export function validateConfig(raw: unknown, source = 'config'): Config {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new ConfigError(`${source}: the file must hold a YAML mapping`);
  const withDefaults = Value.Default(ConfigSchema, structuredClone(raw));
  const first = Value.Errors(ConfigSchema, withDefaults).First();
  if (first) {
    const field = pointerToPath(first.path) || '(root)';
    throw new ConfigError(`${source}: ${field}: ${schemaMessage(first)}`);
  }
  const config = withDefaults as Config;
  const providers = loadProviders(config, source);
  checkCrossReferences(config, source, providers);
  providerSets.set(config, providers);
  return config;
}

// The providers of `providers.dir` each validated config was checked against: the set a start or
// a reload installs together with that config (providerSetOf).
const providerSets = new WeakMap<Config, ProviderSet>();

/** The providers loaded from a config's `providers.dir` when it was validated (none without one). */
export function providerSetOf(config: Config): ProviderSet {
  return providerSets.get(config) ?? NO_PROVIDERS;
}

function loadProviders(config: Config, source: string): ProviderSet {
  const dir = config.providers.dir;
  if (!dir) return NO_PROVIDERS;
  try {
    return loadProviderDir(dir, installedProviders(), isBuiltInType);
  } catch (err) {
    if (err instanceof ProviderDirError) throw new ConfigError(`${source}: providers.dir: ${err.message}`);
    throw err;
  }
}

/** Why a channel's type is unknown, when a manifest of providers.dir explains it. */
function typeHint(type: string, providers: ProviderSet): string {
  const gone = installedProviders().loaded.get(type);
  if (gone && !providers.loaded.has(type)) return `; the manifest ${gone.file} that declared it is no longer in providers.dir`;
  const refused = providers.refused.filter((r) => !r.kept);
  return refused.length ? `; providers.dir refused ${refused.map((r) => r.error).join('; ')}` : '';
}

/** A channel's `settings` against those its provider type declares: known keys, required ones, their forms. */
function checkSettings(ch: Config['channels'][number], declared: Record<string, ChannelSetting>, at: string): void {
  const given = ch.settings ?? {};
  const names = Object.keys(declared);
  for (const k of Object.keys(given)) {
    if (!Object.hasOwn(declared, k)) throw new ConfigError(`${at}.settings.${k}: a ${ch.type} channel takes ${names.length ? `settings ${names.join(', ')}` : 'no settings'}`);
  }
  for (const [k, spec] of Object.entries(declared)) {
    const v = given[k];
    if (v === undefined) {
      if (spec.required) throw new ConfigError(`${at}.settings.${k}: required for a ${ch.type} channel${spec.description ? ` (${spec.description})` : ''}`);
      continue;
    }
    if (spec.pattern && !new RegExp(spec.pattern).test(v)) throw new ConfigError(`${at}.settings.${k}: must match ${spec.pattern}${spec.description ? ` (${spec.description})` : ''} (got ${JSON.stringify(v)})`);
  }
}

/** One channel against the provider types and the declared models: the checks a config file's channels get. */
function checkChannel(ch: Config['channels'][number], at: string, models: Config['models'], providers: ProviderSet): void {
  const provider = providerFor(ch.type, providers);
  if (!provider) throw new ConfigError(`${at}.type: must be one of ${providerTypes(providers).join(', ')} (got ${JSON.stringify(ch.type)})${typeHint(ch.type, providers)}`);
  if (provider.needsBaseUrl && !ch.base_url) throw new ConfigError(`${at}.base_url: required for a ${ch.type} channel`);
  if (provider.needsApiSecret && !ch.api_secret) throw new ConfigError(`${at}.api_secret: required for a ${ch.type} channel`);
  checkSettings(ch, provider.settings ?? {}, at);
  if (ch.upstream_format && !(provider.chatFormats ?? []).includes(ch.upstream_format)) {
    const allowed = provider.chatFormats;
    throw new ConfigError(`${at}.upstream_format: a ${ch.type} channel ${allowed ? `speaks ${allowed.join(' or ')}` : 'has one fixed format; leave it out'}`);
  }
  ch.models.forEach((m, j) => {
    if (!models[m]) throw new ConfigError(`${at}.models[${j}]: model "${escapeUnsafe(m)}" is not declared under models (declared: ${Object.keys(models).sort().join(', ') || 'none'})`);
  });
  for (const m of Object.keys(ch.model_map)) {
    if (!ch.models.includes(m)) throw new ConfigError(`${at}.model_map.${escapeUnsafe(m)}: model is not in this channel's models`);
  }
}

/**
 * A channel added at runtime (admin API, CLI): the same schema and checks as a config file's,
 * against the running config's models and the provider types now installed. Defaults filled.
 */
export function validateChannel(raw: unknown, models: Config['models'], source = 'channel'): Config['channels'][number] {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new ConfigError(`${source}: must be a JSON object`);
  const withDefaults = Value.Default(ChannelSchema, structuredClone(raw));
  const first = Value.Errors(ChannelSchema, withDefaults).First();
  if (first) throw new ConfigError(`${source}${first.path ? `.${pointerToPath(first.path)}` : ''}: ${schemaMessage(first)}`);
  const ch = withDefaults as Config['channels'][number];
  checkChannel(ch, source, models, installedProviders());
  return ch;
}

function checkCrossReferences(config: Config, source: string, providers: ProviderSet): void {
  const names = new Set<string>();
  config.channels.forEach((ch, i) => {
    const at = `${source}: channels[${i}]`;
    if (names.has(ch.name)) throw new ConfigError(`${at}.name: duplicate channel name "${ch.name}"`);
    names.add(ch.name);
    checkChannel(ch, at, config.models, providers);
  });
  config.server.trusted_proxies.forEach((entry, i) => {
    const problem = proxyEntryProblem(entry);
    if (problem) throw new ConfigError(`${source}: server.trusted_proxies[${i}]: ${problem}`);
  });
  checkBudgetSettings(config, source);
  if (config.storage.type === 's3' && !config.storage.s3) throw new ConfigError(`${source}: storage.s3: required when storage.type is s3 (bucket, region, endpoint, credentials)`);
  for (const [id, model] of Object.entries(config.models)) {
    const unsafe = unsafeNameProblem(id);
    if (unsafe) throw new ConfigError(`${source}: models: the model id "${escapeUnsafe(id)}" ${unsafe}`);
    if (model.kind === 'video' && !model.modes) throw new ConfigError(`${source}: models.${id}.modes: required for a video model`);
    if (model.kind !== 'video' && model.modes) throw new ConfigError(`${source}: models.${id}.modes: only a video model has modes`);
    const price = priceRuleProblem(model.kind, model.price);
    if (price) throw new ConfigError(`${source}: models.${id}.price.${price.field}: ${price.message}`);
  }
}

/** The budget time zone must be one Intl knows; an alert URL needs a secret to sign with and an https address. */
function checkBudgetSettings(config: Config, source: string): void {
  const zone = config.limits.budget_time_zone;
  if (!isTimeZone(zone)) throw new ConfigError(`${source}: limits.budget_time_zone: "${zone}" is not an IANA time zone name (e.g. UTC, Europe/Berlin, America/New_York)`);
  const alerts = config.limits.budget_alerts;
  if (alerts.url === undefined) return;
  const at = `${source}: limits.budget_alerts.url`;
  let url: URL;
  try {
    url = new URL(alerts.url);
  } catch {
    throw new ConfigError(`${at}: must be an absolute https URL`);
  }
  const loopbackHttp = config.webhooks.allow_insecure && url.protocol === 'http:' && isLoopbackHost(url.hostname);
  if (url.protocol !== 'https:' && !loopbackHttp) throw new ConfigError(`${at}: must be an https URL (http only to a loopback address with webhooks.allow_insecure)`);
  if (!alerts.secret) throw new ConfigError(`${source}: limits.budget_alerts.secret: required with a url (a Standard Webhooks secret: "whsec_" and the base64 of random bytes, e.g. from \`echo whsec_$(openssl rand -base64 32)\`)`);
}

export interface LoadedConfig {
  config: Config;
  /** Where it came from: a file path, or "embedded default". */
  source: string;
}

/** Reads MEDIAGATE_CONFIG (or the given path), or builds the embedded default when there is none. */
export function loadConfig(env: Env = process.env, path = env.MEDIAGATE_CONFIG): LoadedConfig {
  let raw: Record<string, unknown>;
  let source: string;
  if (path) {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (err) {
      throw new ConfigError(`${path}: cannot read: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
    }
    let parsed: unknown;
    try {
      parsed = parseYaml(text) ?? {};
    } catch (err) {
      // The parser's message names the line and column and quotes the line with a caret: keep all of it.
      throw new ConfigError(`${path}: not valid YAML: ${(err as Error).message.trimEnd()}`);
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new ConfigError(`${path}: the file must hold a YAML mapping`);
    raw = interpolate(parsed, env, '', path) as Record<string, unknown>;
    if ('extends' in raw) raw = overEmbedded(raw, env, path);
    // After the merge: the embedded default's ./data is next to a file that extends it, too.
    anchorSqlitePath(raw, path);
    anchorStorageDir(raw, path);
    anchorProvidersDir(raw, path);
    source = 'extends' in (parsed as Record<string, unknown>) ? `${path} (extends the embedded default)` : path;
  } else {
    raw = embeddedDefault(env) as Record<string, unknown>;
    source = 'embedded default';
  }
  applyEnvOverrides(raw, env);
  return { config: validateConfig(raw, path ?? 'config'), source };
}

import type { ChannelConfig, VideoModeName } from '../config/schema.js';
import { ConfigError, loadConfig, providerSetOf } from '../config-file/loader.js';
import { escapeUnsafe } from '../http/names.js';
import { isBuiltInType, PROVIDERS } from '../providers/index.js';
import { loadManifest } from '../providers/kit/load.js';
import { KitHttp, type KitRequest } from '../providers/kit/http.js';
import type { Manifest, VideoManifest } from '../providers/kit/manifest.js';
import { bodyWith, createCall, pathOf, variants } from '../providers/kit/request.js';
import type { ImageBytes } from '../providers/video-support.js';
import type { VideoCall, VideoGenerationRequest, VideoImage, VideoParams } from '../providers/video-types.js';
import { modelFacts } from '../providers/kit/models.js';
import { targetFor } from '../upstream/target.js';
import { parseCommand, type CommandSpec } from './args.js';
import { CONFIG_OPTION, CommandFailed, JSON_OPTION } from './common.js';

// `mediagate providers list [--json]` and `mediagate providers check FILE` (docs/providers.md).

const say = (line: string) => process.stdout.write(`${escapeUnsafe(line)}\n`);
const complain = (line: string) => process.stderr.write(`mediagate: ${line.split('\n').map(escapeUnsafe).join('\n')}\n`);

interface ProviderLine {
  type: string;
  source: string;
  capabilities: { chat?: string[]; images?: boolean; videos?: VideoModeName[] };
  models: string[];
  /** The simulator: it plays the other providers (chat, images, videos). */
  plays?: boolean;
}

export function listProviders(json: boolean, file?: string): number {
  let config;
  try {
    config = loadConfig(process.env, file ?? process.env.MEDIAGATE_CONFIG).config;
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    complain(`invalid configuration: ${err.message}`);
    return 2;
  }
  const set = providerSetOf(config);
  const lines: ProviderLine[] = PROVIDERS.map((p) => {
    const models = Object.entries(p.defaults.models);
    const modes = [...new Set(models.flatMap(([, m]) => m.modes ?? []))];
    return {
      type: p.type,
      source: 'built-in',
      capabilities: {
        ...(p.chat ? { chat: p.chatFormats ?? ['own format'] } : {}),
        ...(p.images ? { images: true } : {}),
        ...(p.videos ? { videos: modes } : {}),
      },
      models: models.map(([id]) => id),
      ...(p.plays ? { plays: true } : {}),
    };
  });
  for (const [type, l] of set.loaded) {
    lines.push({ type, source: l.file, capabilities: { ...(l.manifest.images ? { images: true } : {}), ...(l.manifest.videos ? { videos: [...l.manifest.videos.modes] } : {}) }, models: l.manifest.models.map((e) => e.id ?? `/${e.match ?? ''}/`) });
  }
  if (json) {
    say(JSON.stringify({ providers: lines, refused: set.refused }));
    return 0;
  }
  for (const l of lines) {
    const caps = l.plays ? 'plays the other providers\' wire formats offline' : [l.capabilities.chat && `chat (${l.capabilities.chat.join(', ')})`, l.capabilities.images && 'images', l.capabilities.videos && `videos (${l.capabilities.videos.join(', ') || 'by model'})`].filter(Boolean).join('; ');
    say(`${l.type}  ${l.source}  ${caps}`);
    if (l.models.length) say(`  models: ${l.models.join(', ')}`);
  }
  for (const r of set.refused) complain(`refused: ${r.error}${r.kept ? ` (the version loaded before stays in force as "${r.kept}")` : ''}`);
  return 0;
}

/** A small PNG's bytes stand in for an image the manifest inlines: the dry run fetches nothing. */
const SAMPLE_IMAGE: ImageBytes = {
  mimeType: 'image/png',
  base64: 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
};

const ROLES: Record<VideoModeName, VideoImage['role'][]> = {
  text: [],
  first_frame: ['first_frame'],
  first_last_frame: ['first_frame', 'last_frame'],
  reference_image: ['reference_image'],
};

/** The sample model of a mode: the first model entry with an id that serves it. */
function sampleModel(m: VideoManifest, mode: VideoModeName): string {
  const entry = m.models.find((e) => e.id && (e.modes ?? m.model_defaults?.modes ?? m.videos.modes).includes(mode));
  return entry?.id ?? m.models.find((e) => e.id)?.id ?? 'sample-model';
}

/** The model's first duration and its default resolution, where the provider takes them. */
function sampleParams(m: VideoManifest, model: string): VideoParams {
  const f = modelFacts(m, model);
  const takes = (p: string) => !m.videos.params || m.videos.params.includes(p);
  const resolution = f.default_resolution ?? f.resolutions?.[0];
  return { ...(takes('duration') && f.durations?.length ? { duration: f.durations[0] } : {}), ...(takes('resolution') && resolution ? { resolution } : {}) };
}

const SECRET_MARK = '****';

/** The request as it would leave, with whatever the auth scheme added masked. */
async function dryRun(m: Manifest, channel: ChannelConfig, model: string, r: KitRequest): Promise<{ method: string; url: string; headers: Record<string, string>; body?: unknown }> {
  const http = new KitHttp(m);
  const target = targetFor(channel, model);
  const plain = { method: r.method, url: http.url(target, r.path), headers: { 'content-type': 'application/json', accept: 'application/json', ...Object.fromEntries(Object.entries({ ...m.api.headers, ...r.headers }).map(([k, v]) => [k.toLowerCase(), v])) } };
  let headers: Record<string, string>;
  let url: string;
  if (m.api.auth.scheme === 'google-service-account') {
    // Signing would exchange the service-account key for a token: a call the dry run does not make.
    [headers, url] = [{ ...plain.headers, authorization: `Bearer ${SECRET_MARK}` }, plain.url];
  } else {
    const signed = await http.signed({} as VideoCall, target, r);
    url = signed.url;
    headers = {};
    for (const [k, v] of Object.entries(signed.headers)) {
      const scheme = /^([A-Za-z0-9-]+) /.exec(v)?.[1];
      headers[k] = plain.headers[k as keyof typeof plain.headers] === v ? v : scheme ? `${scheme} ${SECRET_MARK}` : SECRET_MARK;
    }
    const q = new URL(url);
    const before = new URL(plain.url).searchParams;
    for (const k of [...q.searchParams.keys()]) if (before.get(k) !== q.searchParams.get(k)) q.searchParams.set(k, SECRET_MARK);
    url = q.toString().replaceAll(encodeURIComponent(SECRET_MARK), SECRET_MARK);
  }
  return { method: r.method, url, headers, ...(r.body !== undefined ? { body: r.body } : {}) };
}

export async function checkManifest(file: string, json: boolean): Promise<number> {
  let m: Manifest;
  try {
    m = loadManifest(file);
    if (isBuiltInType(m.type)) throw new Error(`${file}: type: "${m.type}" is a built-in provider type; give the manifest another type name`);
  } catch (err) {
    complain((err as Error).message);
    return 1;
  }
  const channel = {
    name: 'check',
    type: m.type,
    base_url: m.defaults?.base_url ?? 'https://provider.example',
    api_key: 'API_KEY',
    api_secret: 'API_SECRET',
    models: [],
    model_map: {},
  } as unknown as ChannelConfig;
  const calls: { what: string; request: Awaited<ReturnType<typeof dryRun>> }[] = [];
  if (m.videos) {
    const vm = m as VideoManifest;
    const v = m.videos;
    for (const mode of v.modes) {
      const model = sampleModel(vm, mode);
      const images = ROLES[mode].map((role, i) => ({ role, url: `https://example.com/${role}-${i}.png` }));
      const req: VideoGenerationRequest = { prompt: 'A red fox runs through fresh snow at dawn.', mode, images, params: sampleParams(vm, model), metadata: {} };
      const fetched = v.inline_images ? new Map(images.map((_, i) => [i, SAMPLE_IMAGE])) : undefined;
      const c = createCall(vm, model, req, undefined, fetched);
      calls.push({ what: `create (${mode}, model ${model}${variants(vm).length > 1 ? `, variant ${c.variant}` : ''})`, request: await dryRun(m, channel, model, c) });
    }
    const id = 'TASK_ID';
    const model = sampleModel(vm, v.modes[0]);
    calls.push({ what: 'read', request: await dryRun(m, channel, model, { method: v.get.method ?? 'GET', path: pathOf(v.get.path, { id }), headers: v.get.headers, body: bodyWith(v.get.body, { id }) }) });
    if (v.cancel) calls.push({ what: 'cancel', request: await dryRun(m, channel, model, { method: v.cancel.method ?? 'POST', path: pathOf(v.cancel.path, { id }), headers: v.cancel.headers, body: bodyWith(v.cancel.body, { id }) }) });
  }
  if (json) {
    say(JSON.stringify({ file, type: m.type, ok: true, requests: calls }));
    return 0;
  }
  say(`${file}: valid manifest of provider type "${m.type}" (${m.name}); nothing was sent.`);
  for (const c of calls) {
    say('');
    say(`# ${c.what}`);
    say(`${c.request.method} ${c.request.url}`);
    for (const [k, val] of Object.entries(c.request.headers)) say(`${k}: ${val}`);
    if (c.request.body !== undefined) for (const line of JSON.stringify(c.request.body, null, 2).split('\n')) say(line);
  }
  return 0;
}

export const providersListSpec = {
  name: 'providers list',
  summary: 'Every provider type, built-in or loaded from providers.dir, with its capabilities and models.',
  options: { ...JSON_OPTION, ...CONFIG_OPTION },
} satisfies CommandSpec;

export const providersCheckSpec = {
  name: 'providers check',
  summary: 'Validate a provider manifest and print the upstream requests it would send (calls nothing).',
  args: ['FILE'],
  options: { ...JSON_OPTION },
} satisfies CommandSpec;

export async function providersListCommand(argv: string[]): Promise<void> {
  const { values } = parseCommand(providersListSpec, argv);
  if (listProviders(values.json === true, values.config) !== 0) throw new CommandFailed();
}

export async function providersCheckCommand(argv: string[]): Promise<void> {
  const { values, positionals } = parseCommand(providersCheckSpec, argv);
  if ((await checkManifest(positionals[0], values.json === true)) !== 0) throw new CommandFailed();
}

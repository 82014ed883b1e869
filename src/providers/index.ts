import type { ChatFormat } from '../formats/chat-stream.js';
import type { Target } from '../upstream/target.js';
import type { ChatEndpoint } from './chat-types.js';
import type { ImagesAdapter } from './image-types.js';
import type { Capability, Provider } from './provider.js';
import type { VideoAdapter } from './video-types.js';
import type { Manifest } from './kit/manifest.js';
import { anthropic } from './anthropic/index.js';
import { ark } from './ark/index.js';
import { bfl } from './bfl/index.js';
import { gemini } from './gemini/index.js';
import { kling } from './kling/index.js';
import { dashscope } from './dashscope/index.js';
import { minimax } from './minimax/index.js';
import { byteplus } from './byteplus/index.js';
import { jimeng } from './jimeng/index.js';
import { fal } from './fal/index.js';
import { replicate } from './replicate/index.js';
import { openai } from './openai/index.js';
import { simulator } from './simulator/index.js';
import { stability } from './stability/index.js';
import { recraft } from './recraft/index.js';
import { ideogram } from './ideogram/index.js';
import { vidu } from './vidu/index.js';
import { runway } from './runway/index.js';
import { luma } from './luma/index.js';
import { pixverse } from './pixverse/index.js';
import { vertex } from './vertex/index.js';

/**
 * Every provider the gateway speaks to: the one list. Channel types in the config, the embedded
 * default's channels and the adapter of each call all come from here. Adding a provider is adding
 * its folder and one line. Beside them, the providers an operator loads from manifests in the
 * config's `providers.dir` (installProviders); providerFor and providerTypes see both.
 */
export const PROVIDERS: readonly Provider[] = [
  openai,
  anthropic,
  ark,
  gemini,
  kling,
  dashscope,
  minimax,
  bfl,
  vidu,
  runway,
  luma,
  pixverse,
  byteplus,
  ideogram,
  recraft,
  stability,
  jimeng,
  fal,
  replicate,
  vertex,
  simulator,
];

const BUILT_IN = new Map(PROVIDERS.map((p) => [p.type, p]));

/** A provider loaded from a manifest file of the config's `providers.dir`. */
export interface LoadedProvider {
  provider: Provider;
  /** The manifest file it came from (absolute path). */
  file: string;
  manifest: Manifest;
}

/**
 * The providers of a `providers.dir`, as one load of it found them: those in force (by type) and
 * the files refused, each with its reason. A refused file whose previous version was in force
 * keeps that version (`kept`).
 */
export interface ProviderSet {
  loaded: ReadonlyMap<string, LoadedProvider>;
  refused: readonly { file: string; error: string; kept?: string }[];
}

export const NO_PROVIDERS: ProviderSet = { loaded: new Map(), refused: [] };

// The loaded providers in force: replaced whole by installProviders (at start and by a reload that
// applied), never edited, so a lookup sees one set or the next.
let installed: ProviderSet = NO_PROVIDERS;

export function installProviders(set: ProviderSet): void {
  installed = set;
}

/** The loaded providers in force now. */
export function installedProviders(): ProviderSet {
  return installed;
}

/** The provider of a channel type: a built-in one, else one loaded from `providers.dir`. */
export function providerFor(type: string, set: ProviderSet = installed): Provider | undefined {
  return BUILT_IN.get(type) ?? set.loaded.get(type)?.provider;
}

/** Every channel type: the built-in ones, then those loaded from `providers.dir`. */
export function providerTypes(set: ProviderSet = installed): string[] {
  return [...PROVIDERS.map((p) => p.type), ...set.loaded.keys()];
}

/** Whether a type is one of the built-in providers (a manifest may not take its name). */
export function isBuiltInType(type: string): boolean {
  return BUILT_IN.has(type);
}

/** Every provider in force: built-in, then loaded. */
function allProviders(): Provider[] {
  return [...PROVIDERS, ...[...installed.loaded.values()].map((l) => l.provider)];
}

/**
 * The provider whose wire format serves `target` for a capability, and the target to address it
 * at. A simulator channel plays the provider that claims the model (Seedance → Ark), else its
 * default for the capability, at that provider's path under the simulator's origin.
 */
function played(target: Target, capability: Capability, chatFormat: ChatFormat = 'openai'): { provider: Provider; target: Target } | undefined {
  const own = providerFor(target.channel.type);
  if (!own?.plays) return own ? { provider: own, target } : undefined;
  const claimant = allProviders().find((p) => p.simulator?.claims[capability]?.test(target.upstreamModel));
  const type = claimant?.type ?? (capability === 'chat' ? own.plays.chat(chatFormat) : own.plays[capability]);
  const provider = providerFor(type);
  if (!provider?.simulator) return undefined;
  const c = provider.simulator.credentials;
  const credentials = typeof c === 'function' ? c(target.baseUrl) : c;
  return { provider, target: { ...target, ...credentials, baseUrl: `${target.baseUrl}${provider.simulator.path}` } };
}

/**
 * The chat endpoint of a channel for a client of the given format: the channel's `upstream_format`
 * when it sets one; a simulator channel without one speaks the client's own format.
 */
export function chatEndpointFor(target: Target, client: ChatFormat): { endpoint: ChatEndpoint; target: Target } | undefined {
  const own = providerFor(target.channel.type);
  const format = target.channel.upstream_format ?? (own?.plays ? client : undefined);
  const p = played(target, 'chat', format);
  const endpoint = p?.provider.chat?.(format);
  return p && endpoint ? { endpoint, target: p.target } : undefined;
}

export function imagesAdapterFor(target: Target): { adapter: ImagesAdapter; target: Target } | undefined {
  const p = played(target, 'images');
  return p?.provider.images ? { adapter: p.provider.images, target: p.target } : undefined;
}

export function videoAdapterFor(target: Target): { adapter: VideoAdapter; target: Target } | undefined {
  const p = played(target, 'videos');
  return p?.provider.videos ? { adapter: p.provider.videos, target: p.target } : undefined;
}

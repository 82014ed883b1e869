import type { ChatFormat } from '../formats/chat-stream.js';
import type { Target } from '../upstream/target.js';
import type { ChatEndpoint } from './chat-types.js';
import type { ImagesAdapter } from './image-types.js';
import type { Capability, Provider } from './provider.js';
import type { VideoAdapter } from './video-types.js';
import { anthropic } from './anthropic/index.js';
import { ark } from './ark/index.js';
import { gemini } from './gemini/index.js';
import { kling } from './kling/index.js';
import { dashscope } from './dashscope/index.js';
import { minimax } from './minimax/index.js';
import { openai } from './openai/index.js';
import { simulator } from './simulator/index.js';
import { vidu } from './vidu/index.js';
import { runway } from './runway/index.js';
import { luma } from './luma/index.js';
import { pixverse } from './pixverse/index.js';

/**
 * Every provider the gateway speaks to: the one list. Channel types in the config, the embedded
 * default's channels and the adapter of each call all come from here. Adding a provider is adding
 * its folder and one line.
 */
export const PROVIDERS: readonly Provider[] = [openai, anthropic, ark, gemini, kling, dashscope, minimax, vidu, runway, luma, pixverse, simulator];

const BY_TYPE = new Map(PROVIDERS.map((p) => [p.type, p]));

export function providerFor(type: string): Provider | undefined {
  return BY_TYPE.get(type);
}

export function providerTypes(): string[] {
  return PROVIDERS.map((p) => p.type);
}

/**
 * The provider whose wire format serves `target` for a capability, and the target to address it
 * at. A simulator channel plays the provider that claims the model (Seedance → Ark), else its
 * default for the capability, at that provider's path under the simulator's origin.
 */
function played(target: Target, capability: Capability, chatFormat: ChatFormat = 'openai'): { provider: Provider; target: Target } | undefined {
  const own = BY_TYPE.get(target.channel.type);
  if (!own?.plays) return own ? { provider: own, target } : undefined;
  const claimant = PROVIDERS.find((p) => p.simulator?.claims[capability]?.test(target.upstreamModel));
  const type = claimant?.type ?? (capability === 'chat' ? own.plays.chat(chatFormat) : own.plays[capability]);
  const provider = BY_TYPE.get(type);
  if (!provider?.simulator) return undefined;
  return { provider, target: { ...target, ...provider.simulator.credentials, baseUrl: `${target.baseUrl}${provider.simulator.path}` } };
}

/**
 * The chat endpoint of a channel for a client of the given format: the channel's `upstream_format`
 * when it sets one; a simulator channel without one speaks the client's own format.
 */
export function chatEndpointFor(target: Target, client: ChatFormat): { endpoint: ChatEndpoint; target: Target } | undefined {
  const own = BY_TYPE.get(target.channel.type);
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

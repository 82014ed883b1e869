import type { ModelConfig } from '../config/schema.js';
import type { ChatFormat } from '../formats/chat-stream.js';
import type { ChatEndpoint } from './chat-types.js';
import type { ImagesAdapter } from './image-types.js';
import type { VideoAdapter, VideoCall } from './video-types.js';
import type { BalanceCapability } from './balance.js';
import type { Target } from '../upstream/target.js';

/** What a probe found: the provider answered and took the credentials (ok), or why not. */
export interface ProbeOutcome {
  ok: boolean;
  status: number | null;
  message: string;
}

export interface ProbeCapability {
  /** What it sends, for answers and docs (`GET /v1/tasks/… (unknown task: 404)`). */
  description: string;
  run(call: VideoCall, target: Target): Promise<ProbeOutcome>;
}

// One provider (one channel `type`): its capabilities, its wire facts and its defaults. Each
// provider folder exports one of these; src/providers/index.ts lists them all.

export type Capability = 'chat' | 'images' | 'videos';

/** One channel setting a provider type declares. */
export interface ChannelSetting {
  required?: boolean;
  default?: string;
  /** A regular expression the value must match. */
  pattern?: string;
  /** What the value is, for messages. */
  description?: string;
}

/** What a simulator channel uses instead of its own credentials (a function: built from the simulator's origin). */
export interface SimulatorCredentials {
  apiKey: string;
  apiSecret: string;
  settings?: Record<string, string>;
}

export interface ProviderDefaults {
  /** The base_url of the provider's public API (what a channel of this type usually sets). */
  baseUrl?: string;
  /** Environment variables that give the embedded default a real channel of this type. */
  env?: { apiKey: string; apiSecret?: string };
  /** The models the embedded default offers on that channel (with list prices and owned_by). */
  models: Record<string, ModelConfig>;
  /** `owned_by` of the provider's models in GET /v1/models. */
  ownedBy: string;
  /**
   * The embedded simulator plays these models offline (its channel lists them), so the demo runs
   * without the provider's key; a real channel, when its key is set, outranks it.
   */
  simulated?: boolean;
}

export interface Provider {
  /** The channel `type` in the config file. */
  type: string;
  /**
   * Chat: the endpoint speaking `format` — the channel's `upstream_format`, absent when the channel
   * leaves it to the provider's own format.
   */
  chat?: (format: ChatFormat | undefined) => ChatEndpoint;
  /** The chat formats a channel of this type may be told to speak with `upstream_format` (none: one fixed format). */
  chatFormats?: ChatFormat[];
  images?: ImagesAdapter;
  videos?: VideoAdapter;
  /** The account's balance or quota at the provider (a read that costs nothing); absent: none known. */
  balance?: BalanceCapability;
  /** The health probe of a channel of this type (absent: the gateway's default for the type). */
  probe?: ProbeCapability;
  defaults: ProviderDefaults;
  /** Whether a channel of this type must set base_url (false: the gateway knows where it is). */
  needsBaseUrl: boolean;
  /** Whether a channel of this type must set api_secret (signing providers). */
  needsApiSecret?: boolean;
  /** The channel `settings` this type takes (any other key is refused), with their defaults and forms. */
  settings?: Record<string, ChannelSetting>;
  /**
   * For the simulator: which upstream models this provider's adapters serve there (by capability),
   * the path under the simulator's origin where it plays this provider's API, and, for a provider
   * that signs requests (Kling), the account the simulator knows: a simulator channel signs with
   * it instead of its own key, so the real signing code runs against the simulator.
   */
  simulator?: { path: string; claims: Partial<Record<Capability, RegExp>>; credentials?: SimulatorCredentials | ((origin: string) => SimulatorCredentials) };
  /**
   * Only the simulator provider: it has no wire format of its own but plays another provider's,
   * chosen by the model's claim, else these defaults (a chat client gets its own format).
   */
  plays?: { chat: (format: ChatFormat) => string; images: string; videos: string };
}

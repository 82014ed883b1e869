import type { ChannelConfig, VideoModeName } from '../config/schema.js';
import type { Target } from '../upstream/target.js';
import type { UpstreamClient } from '../upstream/client.js';
import { arkVideos } from './ark/videos.js';

// The video-task capability of every wire format: what the task service hands an adapter, what it
// reads back, and the registry from channel type to adapter.

export type ImageRole = 'first_frame' | 'last_frame' | 'reference_image';

export interface VideoImage {
  url: string;
  role: ImageRole;
}

/** Generation parameters as the client gave them (only those it gave). */
export interface VideoParams {
  resolution?: string;
  ratio?: string;
  duration?: number;
  seed?: number;
  camera_fixed?: boolean;
  watermark?: boolean;
  generate_audio?: boolean;
  draft?: boolean;
  service_tier?: string;
  execution_expires_after?: number;
  return_last_frame?: boolean;
}

/** A validated create request; `mode` already follows from the images. */
export interface VideoGenerationRequest {
  prompt: string;
  mode: VideoModeName;
  images: VideoImage[];
  params: VideoParams;
  /** Provider parameters passed through as they are. */
  metadata: Record<string, unknown>;
}

export type ProviderTaskState = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled' | 'expired' | 'unknown';

/** What the gateway needs to know from a provider's task object. */
export interface ProviderTaskView {
  state: ProviderTaskState;
  /** The raw status word, for logs when the state is unknown. */
  rawStatus: string;
  videoUrl: string;
  errorCode: string;
  errorMessage: string;
  /** Billed video tokens, when the provider reported them. */
  totalTokens: number | null;
  /** The provider's last update, Unix seconds (0 when absent). */
  updatedAtS: number;
}

export interface VideoCall {
  upstream: UpstreamClient;
  signal?: AbortSignal;
}

export interface VideoAdapter {
  /** Creates the task; returns the provider's answer, which holds the task id in `id`. */
  create(call: VideoCall, target: Target, req: VideoGenerationRequest): Promise<Record<string, unknown> & { id: string }>;
  /** Reads the task object as the provider sends it. */
  get(call: VideoCall, target: Target, taskId: string): Promise<Record<string, unknown>>;
  view(task: Record<string, unknown>): ProviderTaskView;
}

const ADAPTERS: Partial<Record<ChannelConfig['type'], VideoAdapter>> = {
  ark: arkVideos,
  // The simulator speaks Ark's wire format at its origin.
  simulator: arkVideos,
};

export function videoAdapterFor(type: ChannelConfig['type']): VideoAdapter | undefined {
  return ADAPTERS[type];
}

import type { ChannelConfig } from '../config/schema.js';
import type { ImageType } from '../http/image-type.js';
import type { Target } from '../upstream/target.js';
import type { UpstreamClient } from '../upstream/client.js';
import { openaiImages } from './openai/images.js';
import { arkImages } from './ark/images.js';

// The images capability of every wire format: what a route hands an adapter and what it gets back,
// both in OpenAI Images terms, and the registry from channel type to adapter.

/** The request's parameters in OpenAI Images terms, as the client sent them (validated). */
export interface ImageParams {
  prompt: string;
  n?: number;
  size?: string;
  quality?: string;
  response_format?: 'url' | 'b64_json';
  user?: string;
  /** Any other field the client sent (JSON values for generations, strings for edits). */
  extra: Record<string, unknown>;
}

/** One uploaded file, already checked and spooled to disk, so an attempt can stream it again. */
export interface UploadedImage {
  path: string;
  size: number;
  type: ImageType;
}

export interface EditInput extends ImageParams {
  images: UploadedImage[];
  mask?: UploadedImage;
}

export interface ImageDatum {
  url?: string;
  b64_json?: string;
  revised_prompt?: string;
}

/** The answer in OpenAI's shape: {created, data, usage?} plus OpenAI's optional top-level fields. */
export interface ImagesResult {
  created: number;
  data: ImageDatum[];
  usage?: unknown;
  /** background, output_format, quality, size when the upstream reported them. */
  extra?: Record<string, unknown>;
}

export interface ImagesCall {
  upstream: UpstreamClient;
  signal?: AbortSignal;
}

export interface ImagesAdapter {
  generate(call: ImagesCall, target: Target, params: ImageParams): Promise<ImagesResult>;
  edit(call: ImagesCall, target: Target, input: EditInput): Promise<ImagesResult>;
}

/**
 * The simulator plays the provider a model belongs to: Seedream models (`doubao-seedream-*`, after
 * the channel's model_map) through its Ark images route at its origin, so they behave as Seedream
 * does (a mask is refused, moderation markers apply, no seed means a new picture); every other
 * model through OpenAI's wire format under /v1.
 */
function simulatorAdapter(target: Target): { adapter: ImagesAdapter; target: Target } {
  if (/^doubao-seedream-/.test(target.upstreamModel)) return { adapter: arkImages, target };
  return { adapter: openaiImages, target: { ...target, baseUrl: `${target.baseUrl}/v1` } };
}

const simulatorImages: ImagesAdapter = {
  generate(call, target, params) {
    const to = simulatorAdapter(target);
    return to.adapter.generate(call, to.target, params);
  },
  edit(call, target, input) {
    const to = simulatorAdapter(target);
    return to.adapter.edit(call, to.target, input);
  },
};

const ADAPTERS: Partial<Record<ChannelConfig['type'], ImagesAdapter>> = {
  openai: openaiImages,
  ark: arkImages,
  simulator: simulatorImages,
};

/** The images adapter of a channel type; undefined for a wire format without images (anthropic). */
export function imagesAdapterFor(type: ChannelConfig['type']): ImagesAdapter | undefined {
  return ADAPTERS[type];
}

import type { ImageType } from '../http/image-type.js';
import type { Target } from '../upstream/target.js';
import type { UpstreamClient } from '../upstream/client.js';

// The images capability of every wire format: what a route hands an adapter and what it gets back,
// both in OpenAI Images terms.

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

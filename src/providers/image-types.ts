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
  /** The image type of `b64_json` when the provider said it (never sent to the client). */
  mime?: string;
}

/** What a provider billed for the images, in the units it bills (absent: what it returned). */
export interface ImagesBilled {
  images?: number;
  inputTokens?: number;
  outputTokens?: number;
  megapixels?: number;
}

/** One provider task of a queued request: its id, and the URL it is read at when the provider gave one. */
export interface TaskRef {
  id: string;
  pollUrl?: string;
}

/**
 * The open tasks of a queued request that outlived the wait, as plain data (kept in the store, so
 * another process can follow them): the tasks still running, those cancelled for a client that
 * left, and what the finished ones made and the provider billed.
 */
export interface PendingTasks {
  tasks: TaskRef[];
  cancelled: string[];
  images: number;
  billed: ImagesBilled;
}

/**
 * A queued request whose task(s) outlived the wait (timeout, or the client left): the images are
 * not returned, but the provider still makes (and bills) them. `state` is followed by the
 * adapter's `check` until no task is open; `lifetimeS` bounds how long that may take.
 */
export interface PendingImages {
  taskIds: string[];
  state: PendingTasks;
  lifetimeS: number;
}

/** The answer in OpenAI's shape: {created, data, usage?} plus OpenAI's optional top-level fields. */
export interface ImagesResult {
  created: number;
  data: ImageDatum[];
  usage?: unknown;
  /** background, output_format, quality, size when the upstream reported them. */
  extra?: Record<string, unknown>;
  billed?: ImagesBilled;
  /** Set instead of `data` when the wait for a queued provider ended before its images were ready. */
  pending?: PendingImages;
}

export interface ImagesCall {
  upstream: UpstreamClient;
  signal?: AbortSignal;
  /** The W3C traceparent its upstream requests carry (tracing on). */
  traceparent?: string;
  /** The W3C tracestate they carry beside it (the client's). */
  tracestate?: string;
  /** Polling of a queued provider, from the model's config (`wait`); the provider's defaults otherwise. */
  wait?: { interval_ms?: number; timeout_s?: number };
}

/**
 * What an upstream image model accepts: the values the adapter checks a request against. A field
 * that is absent means the provider judges the value.
 */
export interface ImageModelCaps {
  operations?: ('generate' | 'edit')[];
  /** Sizes (`WxH`) and resolution tiers (`2K`) it renders. */
  sizes?: string[];
  /** Free sizes: each side from min to max (a multiple of `multiple_of`, at most `max_pixels`). */
  dimensions?: { min: number; max: number; multiple_of?: number; max_pixels?: number };
  aspect_ratios?: string[];
  qualities?: string[];
  /** The most images one request may ask for. */
  max_n?: number;
  output_formats?: string[];
  /** Input images one request takes (edit uploads or `image` references). */
  max_input_images?: number;
  mask?: boolean;
}

export interface ImagesAdapter {
  generate(call: ImagesCall, target: Target, params: ImageParams): Promise<ImagesResult>;
  edit(call: ImagesCall, target: Target, input: EditInput): Promise<ImagesResult>;
  /** The provider answers with tasks, so a request may outlive its wait (its hold is kept in the store). */
  queued?: boolean;
  /**
   * Reads each open task of `pending` once: a finished one leaves the list and adds what it made
   * and billed (a failed or cancelled one adds nothing); one that could not be read stays open.
   */
  check?(call: ImagesCall, target: Target, pending: PendingTasks): Promise<PendingTasks>;
  /** What an upstream model accepts, as `generate` and `edit` check it; absent: the provider judges. */
  caps?(upstreamModel: string): ImageModelCaps;
}

import type { Dispatcher } from 'undici';
import type { VideoModeName } from '../config/schema.js';
import type { Target } from '../upstream/target.js';
import type { UpstreamClient } from '../upstream/client.js';

// The video-task capability: what the task service hands an adapter and what it reads back. The
// task layer (src/tasks/) knows only these types; everything provider-specific — which values a
// model accepts, the provider's body, its billing unit, its status words, how its result is fetched —
// sits behind VideoAdapter in the provider's own folder.

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
  fps?: number;
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

/**
 * What one upstream model accepts. A list that is absent means "any value of the right type" (the
 * provider judges it). A value outside a list is a 400 naming the allowed values.
 */
export interface VideoModelCaps {
  /** Modes the model serves; when absent the model's configured `modes` decide alone. */
  modes?: VideoModeName[];
  durations?: number[];
  resolutions?: string[];
  ratios?: string[];
  fps?: number[];
  /** Whether the model renders sound (`generate_audio`); absent: the provider's parameters decide. */
  audio?: boolean;
}

/** How a model is billed: per million tokens, per second of video, or per video. */
export type PriceUnit = 'tokens' | 'seconds' | 'videos';

/** An amount in a billing unit; `resolution` picks the rate when per-second prices differ by resolution. */
export interface BillableUnits {
  unit: PriceUnit;
  units: number;
  resolution?: string;
}

/** The neutral states every provider's task status word maps to. */
export type ProviderTaskState = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled' | 'expired' | 'unknown';

/**
 * How a finished video reaches the client: a URL anyone holding it can fetch until `expiresAtS`
 * (Unix seconds), or content only the channel's key can download (through VideoAdapter.download).
 */
export type ResultDelivery = { kind: 'url'; url: string; expiresAtS: number } | { kind: 'download' };

/** What the gateway needs to know from a provider's task object. */
export interface ProviderTaskView {
  state: ProviderTaskState;
  /** The raw status word, for logs when the state is unknown. */
  rawStatus: string;
  /** Where the video is, once the task succeeded; null when the provider sent none. */
  result: ResultDelivery | null;
  errorCode: string;
  errorMessage: string;
  /** The provider's own progress (0–100), when it reports one. */
  progress: number | null;
  /** The units the provider billed for the finished task, when it reported them. */
  usage: BillableUnits | null;
  /** The provider's last update, Unix seconds (0 when absent). */
  updatedAtS: number;
}

export interface VideoCall {
  upstream: UpstreamClient;
  signal?: AbortSignal;
  /** The W3C traceparent its upstream requests carry (tracing on). */
  traceparent?: string;
  /** The W3C tracestate they carry beside it (the client's). */
  tracestate?: string;
}

export interface CreateOptions {
  /** Where the provider should POST status changes, when the gateway wants them and the adapter supports it. */
  callbackUrl?: string;
}

export interface CreatedTask {
  /** The provider's id of the task, as the adapter needs it to read it back (may contain '/'). */
  upstreamId: string;
  /** The provider's answer, shown to the client as `data` until the first poll. */
  raw: Record<string, unknown>;
  /**
   * True when the task was created without the callback URL it was given (the provider could not
   * reach it): the gateway then polls it like a task without callbacks.
   */
  callbackDropped?: boolean;
}

export interface CancelOutcome {
  /** Whether the provider accepted the cancellation. */
  accepted: boolean;
  /** The provider's reason when it refused. */
  message: string;
}

/** One frame size a model renders (`size: "1280x720"` in the OpenAI Videos API) and what it means in the model's own terms. */
export interface VideoSizeOption {
  /** `WIDTHxHEIGHT` */
  size: string;
  /** The resolution the size stands for, in the adapter's spelling (`720p`). */
  resolution: string;
  /** The ratio it stands for; absent when the model takes no ratio here (the image decides the shape). */
  ratio?: string;
}

export interface VideoAdapter {
  /** What an upstream model (after the channel's model_map) accepts. */
  caps(upstreamModel: string): VideoModelCaps;
  /**
   * The frame sizes (`WIDTHxHEIGHT`, as the OpenAI Videos API names them) the model renders in a
   * mode, with the resolution and ratio each stands for; absent: every resolution of `caps` at
   * every ratio (src/providers/video-sizes.ts).
   */
  sizes?(upstreamModel: string, mode: VideoModeName): VideoSizeOption[];
  /** Whether the provider takes a generation parameter (one it does not is a 400 at create). */
  takesParam?(name: keyof VideoParams): boolean;
  /** Provider-specific checks beyond `caps` (a GatewayError 400 for a value the provider refuses). */
  validate?(upstreamModel: string, req: VideoGenerationRequest): void;
  /** The billable units the request will probably cost, in the model's billing unit (the credit hold). */
  estimate(upstreamModel: string, req: VideoGenerationRequest): BillableUnits;
  /** Seconds the provider lets the task run before it expires it (the gateway waits that long plus grace). */
  expiresAfterS(req: VideoGenerationRequest): number;
  /** Whether `create` passes CreateOptions.callbackUrl to the provider. */
  readonly acceptsCallback: boolean;
  /** Creates the task at the provider. */
  create(call: VideoCall, target: Target, req: VideoGenerationRequest, opts?: CreateOptions): Promise<CreatedTask>;
  /** Reads the task object as the provider sends it. */
  get(call: VideoCall, target: Target, upstreamId: string): Promise<Record<string, unknown>>;
  /**
   * Reads several tasks of one channel in one call, for providers whose API lists tasks by id
   * (absent: the poller reads each task with `get`). Answers the task objects found, each as `get`
   * would answer it, by upstream id; an id missing from the answer is read with `get` by the
   * caller. Uses the target's address and credentials only (never its upstream model: the tasks
   * of one call may belong to several models). At most `getManyMax` ids per call.
   */
  getMany?(call: VideoCall, target: Target, upstreamIds: readonly string[]): Promise<Map<string, Record<string, unknown>>>;
  /** The most ids one `getMany` call takes. */
  readonly getManyMax?: number;
  /** Maps the provider's task object to neutral terms. */
  view(task: Record<string, unknown>, now?: number): ProviderTaskView;
  /** Cancels a task the provider still has queued; absent when the provider cannot cancel. */
  cancel?(call: VideoCall, target: Target, upstreamId: string): Promise<CancelOutcome>;
  /**
   * Starts the download of a finished task's video whose result is `{kind: 'download'}`: the
   * upstream response (status, headers, body stream) fetched with the channel's credentials.
   */
  download?(call: VideoCall, target: Target, task: Record<string, unknown>, range?: string): Promise<Dispatcher.ResponseData>;
}

import { Type, type Static } from '@sinclair/typebox';
import { GatewayError, errors } from '../http/errors.js';
import type { BillableUnits, VideoGenerationRequest } from '../providers/video-types.js';
import { videoSizes } from '../providers/video-sizes.js';
import type { TaskRow } from '../store/repos/tasks.js';
import type { VideoBinding } from './binding.js';
import { progressOf } from './status.js';

// The OpenAI Videos API (/v1/videos) over the same video tasks as /v1/video/generations: its
// create body mapped to a native one (each provider decides what `seconds` and `size` mean for its
// model), and a task shown as OpenAI's `video` object.

export interface VideoCreateInput {
  model: string;
  prompt: string;
  /** Whole seconds, as the client wrote them. */
  seconds?: string;
  /** `WIDTHxHEIGHT` */
  size?: string;
  /** The first frame: an http(s) URL or a data: URL (an uploaded file becomes one). */
  image?: string;
  metadata?: unknown;
}

/** What the video object shows that the provider's task object does not reliably hold (stored with the task). */
export interface VideoMeta {
  prompt: string;
  seconds: string;
  size: string;
}

const FIELDS = ['model', 'prompt', 'seconds', 'size', 'input_reference', 'metadata'];
const SECONDS = /^\d{1,3}$/;
const SIZE = /^(\d{2,5})x(\d{2,5})$/;

const bad = (message: string, param: string) => errors.invalidRequest(message, param);
const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

function inputReference(v: unknown): string | undefined {
  if (v === undefined) return undefined;
  if (typeof v === 'string') return v;
  if (!isObject(v)) throw bad('input_reference must be an uploaded image file or {"image_url": "<http(s) or data: URL>"}.', 'input_reference');
  for (const k of Object.keys(v)) {
    if (k === 'file_id') throw bad('input_reference.file_id is not supported (this gateway has no files API): upload the image as input_reference or give input_reference[image_url].', 'input_reference');
    if (k !== 'image_url') throw bad(`input_reference.${k} is not a known field; give input_reference[image_url] or upload a file.`, 'input_reference');
  }
  if (typeof v.image_url !== 'string' || !v.image_url) throw bad('input_reference.image_url must be an http(s) URL or a data:image/…;base64 URL.', 'input_reference');
  return v.image_url;
}

/** Checks the create body's fields and types (a JSON body, or a form read into one). */
export function parseVideoCreate(body: unknown): VideoCreateInput {
  if (!isObject(body)) throw errors.invalidRequest('The request body must be a JSON object or multipart/form-data.');
  for (const k of Object.keys(body)) {
    if (!FIELDS.includes(k)) throw bad(`Unknown field "${k}"; /v1/videos takes ${FIELDS.join(', ')} (provider parameters go in "metadata").`, k);
  }
  if (typeof body.model !== 'string' || !body.model) throw bad('model is required: the id of a video model (see GET /v1/models).', 'model');
  if (body.prompt !== undefined && typeof body.prompt !== 'string') throw bad('prompt must be a string.', 'prompt');
  const seconds = typeof body.seconds === 'number' ? String(body.seconds) : body.seconds;
  if (seconds !== undefined && (typeof seconds !== 'string' || !SECONDS.test(seconds.trim()))) throw bad('seconds must be a whole number of seconds as a string, e.g. "8".', 'seconds');
  if (body.size !== undefined && (typeof body.size !== 'string' || !SIZE.test(body.size.trim()))) throw bad('size must be WIDTHxHEIGHT, e.g. "1280x720".', 'size');
  return {
    model: body.model,
    prompt: (body.prompt as string | undefined) ?? '',
    seconds: (seconds as string | undefined)?.trim(),
    size: (body.size as string | undefined)?.trim(),
    image: inputReference(body.input_reference),
    metadata: body.metadata,
  };
}

const quoted = (values: readonly (string | number)[]) => values.map((v) => `"${v}"`).join(', ');

/**
 * The native create body for a Videos API request: `seconds` becomes the duration and `size` the
 * resolution and ratio the model's provider says it stands for. A value the model cannot do is a
 * 400 listing the ones it can.
 */
export function nativeVideoBody(input: VideoCreateInput, modelId: string, judge: VideoBinding): Record<string, unknown> {
  const { adapter, target } = judge;
  const body: Record<string, unknown> = { model: input.model, prompt: input.prompt };
  if (input.image !== undefined) body.image = input.image;
  if (input.metadata !== undefined) body.metadata = input.metadata;
  if (input.seconds !== undefined) {
    const n = Number(input.seconds);
    const allowed = adapter.caps(target.upstreamModel).durations;
    if (allowed ? !allowed.includes(n) : n < 1 || n > 60) {
      throw bad(`seconds must be ${allowed ? `one of ${quoted(allowed)}` : 'from "1" to "60"'} for model "${modelId}".`, 'seconds');
    }
    body.duration = n;
  }
  if (input.size !== undefined) {
    const options = videoSizes(adapter, target.upstreamModel, input.image === undefined ? 'text' : 'first_frame');
    const hit = options.find((o) => o.size === input.size);
    if (!hit) throw bad(options.length ? `size must be one of ${quoted(options.map((o) => o.size))} for model "${modelId}".` : `The model "${modelId}" takes no size; leave it out.`, 'size');
    body.resolution = hit.resolution;
    if (hit.ratio !== undefined) body.ratio = hit.ratio;
  }
  return body;
}

/** The Videos API's names of native fields, for the errors of the checks both APIs share. */
const OPENAI_PARAM: Record<string, string> = { duration: 'seconds', resolution: 'size', ratio: 'size', image: 'input_reference', images: 'input_reference' };

/** A 400 about a native field, renamed to the Videos API field the client sent. */
export function asVideosApiError(err: unknown): unknown {
  if (!(err instanceof GatewayError) || err.status !== 400 || !err.param || !OPENAI_PARAM[err.param]) return err;
  return new GatewayError(err.status, err.code, err.message, err.headers, OPENAI_PARAM[err.param]);
}

const metaNumber = (v: unknown) => (typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : undefined);

/**
 * The prompt, seconds and size a task shows as a video. Values the client left out are the ones the
 * credit hold assumed (the provider's default length and resolution, 16:9).
 */
export function videoMeta(req: VideoGenerationRequest, judge: VideoBinding, estimate: BillableUnits, given: { seconds?: string; size?: string } = {}): VideoMeta {
  const seconds = given.seconds ?? String(req.params.duration ?? metaNumber(req.metadata.duration) ?? (estimate.unit === 'seconds' ? estimate.units : 5));
  let size = given.size;
  if (size === undefined) {
    const resolution = req.params.resolution ?? estimate.resolution;
    const ratio = req.params.ratio ?? '16:9';
    const options = videoSizes(judge.adapter, judge.target.upstreamModel, req.mode).filter((o) => o.resolution === resolution);
    size = (options.find((o) => o.ratio === ratio) ?? options.find((o) => o.ratio === undefined) ?? options[0])?.size ?? '';
  }
  return { prompt: req.prompt, seconds, size };
}

export const VideoObjectSchema = Type.Object(
  {
    id: Type.String(),
    object: Type.Literal('video'),
    model: Type.String(),
    status: Type.String(),
    progress: Type.Integer(),
    created_at: Type.Integer(),
    completed_at: Type.Union([Type.Integer(), Type.Null()]),
    expires_at: Type.Union([Type.Integer(), Type.Null()]),
    prompt: Type.Union([Type.String(), Type.Null()]),
    seconds: Type.String(),
    size: Type.String(),
    remixed_from_video_id: Type.Null(),
    error: Type.Union([Type.Object({ code: Type.String(), message: Type.String() }, { additionalProperties: false }), Type.Null()]),
  },
  { additionalProperties: false },
);

export type VideoObject = Static<typeof VideoObjectSchema>;

const STATUS: Record<string, string> = { SUBMITTED: 'queued', QUEUED: 'queued', IN_PROGRESS: 'in_progress', SUCCESS: 'completed', FAILURE: 'failed' };

export function parseMeta(text: string): Partial<VideoMeta> {
  try {
    const v: unknown = JSON.parse(text);
    return isObject(v) ? (v as Partial<VideoMeta>) : {};
  } catch {
    return {};
  }
}

/**
 * A task as OpenAI's `video` object. `expires_at`: when the archive drops the copy (with a
 * retention); otherwise null, as the provider's retention is not known to the gateway.
 */
export function toVideoObject(row: Pick<TaskRow, 'task_id' | 'model' | 'status' | 'fail_reason' | 'submit_time' | 'start_time' | 'finish_time' | 'progress' | 'video_meta'>, opts: { now?: number; retainDays?: number } = {}): VideoObject {
  const now = opts.now ?? Date.now();
  const meta = parseMeta(row.video_meta);
  const finished = row.status === 'SUCCESS' || row.status === 'FAILURE';
  const cut = row.fail_reason.indexOf(': ');
  return {
    id: row.task_id,
    object: 'video',
    model: row.model,
    status: STATUS[row.status] ?? 'queued',
    progress: parseInt(progressOf(row.status, row.start_time, Math.floor(now / 1000), row.progress), 10) || 0,
    created_at: row.submit_time,
    completed_at: finished && row.finish_time ? row.finish_time : null,
    expires_at: row.status === 'SUCCESS' && opts.retainDays && row.finish_time ? row.finish_time + opts.retainDays * 86_400 : null,
    prompt: typeof meta.prompt === 'string' ? meta.prompt : null,
    seconds: typeof meta.seconds === 'string' ? meta.seconds : '',
    size: typeof meta.size === 'string' ? meta.size : '',
    remixed_from_video_id: null,
    error:
      row.status === 'FAILURE'
        ? cut > 0
          ? { code: row.fail_reason.slice(0, cut), message: row.fail_reason.slice(cut + 2) }
          : { code: 'failed', message: row.fail_reason || 'The video could not be generated.' }
        : null,
  };
}

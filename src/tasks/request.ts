import type { VideoModeName } from '../config/schema.js';
import { GatewayError, errors } from '../http/errors.js';
import type { ImageRole, VideoGenerationRequest, VideoImage, VideoParams } from '../providers/video-types.js';
import type { Principal } from '../auth/principal.js';
import type { TaskRow } from '../store/repos/tasks.js';

// The body of POST /v1/video/generations: checked field by field so every mistake gets a 400 that
// names the field, and the mode derived from the images (docs/video.md). Only types and generic
// bounds are checked here; which values a model accepts is its provider adapter's (capabilities.ts).

export const TASK_ID = /^[A-Za-z0-9_.-]{1,128}$/;

export const ACTIONS: Record<VideoModeName, string> = {
  text: 'textGenerate',
  first_frame: 'generate',
  first_last_frame: 'firstTailGenerate',
  reference_image: 'referenceGenerate',
};

const ROLES: ImageRole[] = ['first_frame', 'last_frame', 'reference_image'];
const BOOLEAN_FIELDS = ['camera_fixed', 'watermark', 'generate_audio', 'draft', 'return_last_frame'] as const;
const KNOWN = new Set([
  'model', 'prompt', 'images', 'image', 'duration', 'seconds', 'resolution', 'ratio', 'fps', 'seed', 'service_tier',
  'execution_expires_after', 'metadata', ...BOOLEAN_FIELDS,
  // Completion webhooks; checked by the subscription hook (webhooks/subscription.ts).
  'callback_url', 'callback_events',
]);
const IMAGE_URL = /^(https?:\/\/\S+|data:image\/[a-z0-9.+-]+;base64,[A-Za-z0-9+/=\s]+)$/;
const MAX_PROMPT = 10_000;

export interface ParsedCreate {
  model: string;
  action: string;
  request: VideoGenerationRequest;
}

const bad = (message: string, param: string | null = null) => errors.invalidRequest(message, param);

function isObject(v: unknown): v is Record<string, unknown> {
  return !!v && typeof v === 'object' && !Array.isArray(v);
}

function parseImage(v: unknown, at: string): { url: string; role?: ImageRole } {
  let url: unknown = v;
  let role: unknown;
  if (isObject(v)) {
    for (const k of Object.keys(v)) if (k !== 'url' && k !== 'role') throw bad(`${at}.${k} is not a known field; an image is a URL string or {"url", "role"}.`, at);
    url = v.url;
    role = v.role;
  }
  if (typeof url !== 'string' || !IMAGE_URL.test(url)) throw bad(`${at} must be an http(s) URL or a data:image/…;base64 URL.`, at);
  if (role !== undefined && !ROLES.includes(role as ImageRole)) throw bad(`${at}.role must be one of ${ROLES.join(', ')}.`, at);
  return { url, role: role as ImageRole | undefined };
}

/** Mode and final roles from the images (the table in docs/video.md); any other combination is 400. */
export function deriveMode(images: { url: string; role?: ImageRole }[]): { mode: VideoModeName; images: VideoImage[] } {
  const roles = images.map((i) => i.role);
  if (images.length === 0) return { mode: 'text', images: [] };
  if (images.length > 4) throw bad('At most 4 images may be sent.', 'images');
  if (roles.every((r) => r === 'reference_image')) return { mode: 'reference_image', images: images.map((i) => ({ url: i.url, role: 'reference_image' })) };
  if (images.length === 1 && (roles[0] === undefined || roles[0] === 'first_frame')) return { mode: 'first_frame', images: [{ url: images[0].url, role: 'first_frame' }] };
  if (images.length === 2 && roles.includes('first_frame') && roles.includes('last_frame')) {
    const first = images.find((i) => i.role === 'first_frame')!;
    const last = images.find((i) => i.role === 'last_frame')!;
    return { mode: 'first_last_frame', images: [{ url: first.url, role: 'first_frame' }, { url: last.url, role: 'last_frame' }] };
  }
  throw bad(
    'The image roles do not form a mode: send one first frame (role absent or "first_frame"), two images with roles "first_frame" and "last_frame", or 1–4 images all with role "reference_image". Modes cannot be mixed.',
    'images',
  );
}

function intField(body: Record<string, unknown>, k: string, min: number, max: number): number | undefined {
  const v = body[k];
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) throw bad(`${k} must be an integer from ${min} to ${max}.`, k);
  return v;
}

function stringField(body: Record<string, unknown>, k: string): string | undefined {
  const v = body[k];
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || !v || v.length > 32) throw bad(`${k} must be a non-empty string of at most 32 characters.`, k);
  return v;
}

export function parseCreateBody(body: unknown): ParsedCreate {
  if (!isObject(body)) throw bad('The request body must be a JSON object.');
  for (const k of Object.keys(body)) {
    if (!KNOWN.has(k)) throw bad(`Unknown field "${k}". Provider parameters the gateway does not know go in "metadata".`, k);
  }
  if (typeof body.model !== 'string' || !body.model || body.model.length > 256) throw bad('model is required: the id of a video model (see GET /v1/models).', 'model');
  if (body.prompt !== undefined && typeof body.prompt !== 'string') throw bad('prompt must be a string.', 'prompt');
  const prompt = ((body.prompt as string | undefined) ?? '').trim();
  if (prompt.length > MAX_PROMPT) throw bad(`prompt must be at most ${MAX_PROMPT} characters.`, 'prompt');

  if (body.image !== undefined && body.images !== undefined) throw bad('Send either "image" (one first frame) or "images", not both.', 'image');
  let raw: { url: string; role?: ImageRole }[] = [];
  if (body.image !== undefined) {
    if (typeof body.image !== 'string') throw bad('image must be one image URL (a first frame).', 'image');
    raw = [parseImage(body.image, 'image')];
  } else if (body.images !== undefined) {
    if (!Array.isArray(body.images)) throw bad('images must be an array of image URLs or {"url", "role"} objects.', 'images');
    raw = body.images.map((v, i) => parseImage(v, `images[${i}]`));
  }
  const { mode, images } = deriveMode(raw);
  if (mode === 'text' && !prompt) throw bad('prompt is required when no image is given (text-to-video).', 'prompt');

  let duration = intField(body, 'duration', 1, 60);
  if (body.seconds !== undefined) {
    const s = body.seconds;
    const n = typeof s === 'string' && /^\d{1,3}$/.test(s.trim()) ? Number(s.trim()) : typeof s === 'number' && Number.isInteger(s) ? s : NaN;
    if (!(n >= 1 && n <= 60)) throw bad('seconds must be a whole number of seconds from 1 to 60, e.g. "5".', 'seconds');
    if (duration !== undefined && duration !== n) throw bad('duration and seconds disagree; send one of them.', 'seconds');
    duration = n;
  }

  const params: VideoParams = {
    resolution: stringField(body, 'resolution'),
    ratio: stringField(body, 'ratio'),
    duration,
    fps: intField(body, 'fps', 1, 120),
    seed: intField(body, 'seed', -1, 2 ** 32 - 1),
    service_tier: stringField(body, 'service_tier'),
    // The gateway only bounds it (it sets the task's deadline) and lets the provider judge the rest.
    execution_expires_after: intField(body, 'execution_expires_after', 1, 259200),
  };
  for (const k of BOOLEAN_FIELDS) {
    const v = body[k];
    if (v !== undefined && typeof v !== 'boolean') throw bad(`${k} must be true or false.`, k);
    params[k] = v as boolean | undefined;
  }
  for (const k of Object.keys(params) as (keyof VideoParams)[]) if (params[k] === undefined) delete params[k];

  let metadata: Record<string, unknown> = {};
  if (body.metadata !== undefined) {
    if (!isObject(body.metadata)) throw bad('metadata must be a JSON object of provider parameters.', 'metadata');
    if ('model' in body.metadata) throw bad('metadata.model is set by the gateway and cannot be passed through.', 'metadata');
    metadata = body.metadata;
  }

  return { model: body.model, action: ACTIONS[mode], request: { prompt, mode, images, params, metadata } };
}

export function invalidTaskId(): GatewayError {
  return new GatewayError(400, 'invalid_task_id', 'task_id must be 1–128 characters of letters, digits, "_", "." and "-".');
}

export function taskNotExist(): GatewayError {
  return new GatewayError(404, 'task_not_exist', 'The task does not exist.');
}

/**
 * The caller's own task by its public id, for every client read, cancel, download and delete:
 * another key's task and a deleted one answer exactly like a task that does not exist.
 */
export async function ownedTask<R extends Pick<TaskRow, 'key_id' | 'deleted_at'> = TaskRow>(repo: { get(taskId: string): Promise<R | undefined> }, p: Principal, taskId: string): Promise<R> {
  if (!TASK_ID.test(taskId)) throw invalidTaskId();
  const row = await repo.get(taskId);
  if (!row || row.key_id !== p.keyId || row.deleted_at > 0) throw taskNotExist();
  return row;
}

import type { Dispatcher } from 'undici';
import type { VideoModeName } from '../../config/schema.js';
import { errors } from '../../http/errors.js';
import { UpstreamFailure } from '../../upstream/failure.js';
import type { Target } from '../../upstream/target.js';
import type { ProviderTaskState, VideoAdapter, VideoCall, VideoGenerationRequest } from '../video-types.js';
import { getFollowingRedirects, jsonCall, obj, refuseParams, refuseReserved, secondsEstimate, str } from '../video-support.js';
import { baseRespFailure, minimaxFailure, minimaxHeaders, minimaxUrl } from './api.js';
import { sizesFromCaps, uniqueSizes } from '../video-sizes.js';
import { HAILUO_1080P_DURATION, HAILUO_FALLBACK, HAILUO_FRAME, HAILUO_MODELS, HAILUO_MODERATION_CODES, type HailuoMode } from './wire.js';

// MiniMax Hailuo video generation:
//   POST /v1/video_generation                {model, prompt, duration, resolution, first_frame_image?, last_frame_image?, subject_reference?}
//        → {task_id, base_resp}
//   GET  /v1/query/video_generation?task_id= → {task_id, status, file_id, video_width, video_height, base_resp}
//   GET  /v1/files/retrieve?file_id=         → {file:{download_url, …}, base_resp} (with the key)
// The finished video is a file the key resolves to a short-lived download URL, so clients get
// it through the gateway. A failed task's reason is in base_resp (1026 / 1027: content safety).

const PROVIDER = 'MiniMax Hailuo';
const STATES: Record<string, ProviderTaskState> = { Preparing: 'queued', Queueing: 'queued', Processing: 'running', Success: 'succeeded', Fail: 'failed' };
/** The gateway's mode names for MiniMax's input shapes (a subject reference is a reference image). */
const MODE_NAMES: Record<HailuoMode, VideoModeName> = { text: 'text', first_frame: 'first_frame', first_last_frame: 'first_last_frame', subject: 'reference_image' };
/** Fields the gateway builds itself; metadata cannot replace them. */
const RESERVED = ['model', 'prompt', 'duration', 'resolution', 'first_frame_image', 'last_frame_image', 'subject_reference', 'callback_url'];
/** MiniMax keeps task records for days; a task still open after this long is given up. */
const GIVE_UP_AFTER_S = 24 * 3600;

const facts = (model: string) => HAILUO_MODELS[model] ?? HAILUO_FALLBACK;
const lower = (r: string) => r.toLowerCase();

/** A create refused for its callback URL: base_resp 2013 (invalid parameters) naming callback_url. */
function refusedCallback(err: unknown): boolean {
  return err instanceof UpstreamFailure && err.providerCode === '2013' && /callback/i.test(err.message);
}

/** The create body in MiniMax's format. */
export function hailuoCreateBody(upstreamModel: string, req: VideoGenerationRequest, callbackUrl?: string): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(req.metadata)) if (!RESERVED.includes(k)) body[k] = v;
  body.model = upstreamModel;
  if (req.prompt) body.prompt = req.prompt;
  if (req.params.duration !== undefined) body.duration = req.params.duration;
  if (req.params.resolution !== undefined) body.resolution = req.params.resolution.toUpperCase();
  const first = req.images.find((i) => i.role === 'first_frame');
  const last = req.images.find((i) => i.role === 'last_frame');
  const refs = req.images.filter((i) => i.role === 'reference_image');
  if (first) body.first_frame_image = first.url;
  if (last) body.last_frame_image = last.url;
  if (refs.length) body.subject_reference = [{ type: 'character', image: refs.map((r) => r.url) }];
  if (callbackUrl) body.callback_url = callbackUrl;
  return body;
}

/** A 2xx answer whose base_resp is not 0 is a failure too, except a task read (its failure is the task's). */
async function minimaxCall(call: VideoCall, target: Target, path: string, body?: unknown): Promise<Record<string, unknown>> {
  const out = await jsonCall(call, { url: minimaxUrl(target, path), method: body === undefined ? 'GET' : 'POST', headers: minimaxHeaders(target), body }, minimaxFailure);
  const base = obj(out.base_resp);
  const isTaskRead = typeof out.status === 'string' && out.status !== '';
  if (Number(base.status_code ?? 0) !== 0 && !isTaskRead) throw baseRespFailure(base);
  return out;
}

async function download(call: VideoCall, target: Target, task: Record<string, unknown>, range?: string): Promise<Dispatcher.ResponseData> {
  const fileId = str(task.file_id);
  if (!/^[0-9]+$/.test(fileId)) throw new UpstreamFailure('malformed', 'the task holds no file to download', 200);
  const file = obj((await minimaxCall(call, target, `/files/retrieve?file_id=${fileId}`)).file);
  const url = str(file.download_url);
  if (!/^https?:\/\//.test(url)) throw new UpstreamFailure('malformed', 'the file has no download_url', 200);
  // The download URL is signed and needs no key: the key never leaves for the storage host.
  return getFollowingRedirects(call, target, url, (): Record<string, string> => (range ? { range } : {}));
}

export const minimaxVideos: VideoAdapter = {
  caps: (model) => {
    const f = facts(model);
    return { modes: f.modes.map((m) => MODE_NAMES[m]), durations: f.durations, resolutions: f.resolutions.map(lower) };
  },

  // MiniMax has no ratio: a size picks the resolution; its own frame sizes (1366x768 …) and the usual ones.
  sizes(model) {
    const own = facts(model).resolutions.map((r) => ({ size: HAILUO_FRAME[r].join('x'), resolution: lower(r) }));
    return uniqueSizes([...own, ...sizesFromCaps(minimaxVideos.caps(model))]);
  },

  validate(model, req) {
    refuseParams(req, PROVIDER, ['resolution', 'duration']);
    const { duration, resolution } = req.params;
    if (resolution === '1080p' && duration !== undefined && duration !== HAILUO_1080P_DURATION) throw errors.invalidRequest(`duration must be ${HAILUO_1080P_DURATION} at 1080p on MiniMax (allowed: ${HAILUO_1080P_DURATION}).`, 'duration');
    if (resolution === '512p' && req.images.length === 0) throw errors.invalidRequest(`resolution 512p needs a first frame on MiniMax; text-to-video takes ${facts(model).resolutions.filter((r) => r !== '512P').map(lower).join(', ')}.`, 'resolution');
    if (req.images.filter((i) => i.role === 'reference_image').length > 1) throw errors.invalidRequest('MiniMax takes one subject reference image.', 'images');
    refuseReserved(req, RESERVED);
  },

  estimate: (model, req) => secondsEstimate(req, { duration: 6, resolution: lower(facts(model).defaultResolution) }),

  expiresAfterS: () => GIVE_UP_AFTER_S,

  // MiniMax first POSTs {"challenge"} to callback_url and wants it echoed, then each status change.
  acceptsCallback: true,

  async create(call, target, req, opts) {
    let out: Record<string, unknown>;
    let callbackDropped = false;
    try {
      out = await minimaxCall(call, target, '/video_generation', hailuoCreateBody(target.upstreamModel, req, opts?.callbackUrl));
    } catch (err) {
      // MiniMax refuses the whole task when the callback URL does not answer its challenge (a
      // public_url it cannot reach): the callback is only a hint, so the task is created without it.
      if (!opts?.callbackUrl || !refusedCallback(err)) throw err;
      out = await minimaxCall(call, target, '/video_generation', hailuoCreateBody(target.upstreamModel, req));
      callbackDropped = true;
    }
    const id = str(out.task_id);
    if (!/^[A-Za-z0-9_-]+$/.test(id)) throw new UpstreamFailure('malformed', 'the upstream accepted the task without a usable task_id', 200);
    return { upstreamId: id, raw: out, ...(callbackDropped ? { callbackDropped } : {}) };
  },

  get(call, target, upstreamId) {
    return minimaxCall(call, target, `/query/video_generation?task_id=${encodeURIComponent(upstreamId)}`);
  },

  view(task) {
    const status = str(task.status);
    const state = STATES[status] ?? 'unknown';
    const base = obj(task.base_resp);
    const code = Number(base.status_code ?? 0);
    const failed = state === 'failed';
    return {
      state,
      rawStatus: status,
      result: state === 'succeeded' && str(task.file_id) ? { kind: 'download' } : null,
      errorCode: failed ? (HAILUO_MODERATION_CODES.includes(code) ? `content_filtered_${code}` : String(base.status_code ?? 'failed')) : '',
      errorMessage: failed ? str(base.status_msg) || 'MiniMax reported the task failed.' : '',
      progress: null,
      // MiniMax reports the frame size but not the length: the requested duration and resolution settle.
      usage: null,
      updatedAtS: 0,
    };
  },

  download,
};

import { errors } from '../../http/errors.js';
import { UpstreamFailure } from '../../upstream/failure.js';
import type { Target } from '../../upstream/target.js';
import type { ProviderTaskState, VideoAdapter, VideoCall, VideoGenerationRequest } from '../video-types.js';
import { jsonCall, obj, refuseParams, refuseReserved, secondsEstimate, str, urlOrRawBase64 } from '../video-support.js';
import { resolutionOnly, sizesFromCaps } from '../video-sizes.js';
import { klingFailure, klingHeaders, klingUrl } from './api.js';
import { KLING_FALLBACK, KLING_MODELS, KLING_RATIOS } from './wire.js';

// Kling video generation:
//   POST /v1/videos/text2video | /v1/videos/image2video → {code:0, data:{task_id, task_status, …}}
//   GET  /v1/videos/{text2video|image2video}/{task_id}  → {code:0, data:{…, task_result:{videos:[{url, duration}]}}}
// The task is read under the path it was created at, so the gateway's upstream id is
// "{text2video|image2video}/{task_id}" (it holds '/', so clients see a gateway-minted id).
// Kling's `mode` is its resolution: std renders 720p, pro 1080p. Durations are strings.

const PROVIDER = 'Kling';
const KIND_ID = /^(text2video|image2video)\/([A-Za-z0-9_-]+)$/;
const STATES: Record<string, ProviderTaskState> = { submitted: 'queued', processing: 'running', succeed: 'succeeded', failed: 'failed' };
/** Fields the gateway builds itself; metadata cannot replace them. */
const RESERVED = ['model_name', 'model', 'image', 'image_tail', 'callback_url'];
const MODE_OF: Record<string, string> = { '720p': 'std', '1080p': 'pro' };
/** Kling keeps generated media about 30 days. */
const MEDIA_KEPT_S = 30 * 86400;
/** Kling has no task expiry of its own; a task still open after this long is given up. */
const GIVE_UP_AFTER_S = 24 * 3600;

const facts = (model: string) => KLING_MODELS[model] ?? KLING_FALLBACK;

/** The create path and body in Kling's format. */
export function klingCreate(upstreamModel: string, req: VideoGenerationRequest, callbackUrl?: string): { kind: 'text2video' | 'image2video'; body: Record<string, unknown> } {
  const body: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(req.metadata)) if (!RESERVED.includes(k)) body[k] = v;
  body.model_name = upstreamModel;
  if (req.prompt) body.prompt = req.prompt;
  if (req.params.resolution !== undefined) body.mode = MODE_OF[req.params.resolution];
  if (req.params.duration !== undefined) body.duration = String(req.params.duration);
  if (callbackUrl) body.callback_url = callbackUrl;
  const first = req.images.find((i) => i.role === 'first_frame');
  const last = req.images.find((i) => i.role === 'last_frame');
  if (!first) {
    if (req.params.ratio !== undefined) body.aspect_ratio = req.params.ratio;
    return { kind: 'text2video', body };
  }
  body.image = urlOrRawBase64(first.url);
  if (last) body.image_tail = urlOrRawBase64(last.url);
  return { kind: 'image2video', body };
}

/** Reads Kling's envelope; a non-zero code in a 2xx answer is a failure too. */
async function klingCall(call: VideoCall, target: Target, method: 'GET' | 'POST', path: string, body?: unknown): Promise<Record<string, unknown>> {
  const out = await jsonCall(call, { url: klingUrl(target, path), method, headers: klingHeaders(target), body }, klingFailure);
  if (out.code !== 0) throw new UpstreamFailure('status', str(out.message) || `Kling answered code ${String(out.code)}`, 502, String(out.code ?? ''));
  return out;
}

export const klingVideos: VideoAdapter = {
  caps: (model) => ({
    modes: facts(model).tail ? ['text', 'first_frame', 'first_last_frame'] : ['text', 'first_frame'],
    durations: [5, 10],
    resolutions: Object.keys(MODE_OF),
    ratios: KLING_RATIOS,
  }),

  // From an image the image decides the shape: a size picks the mode (resolution) only.
  sizes(model, mode) {
    const all = sizesFromCaps(klingVideos.caps(model));
    return mode === 'text' ? all : resolutionOnly(all);
  },

  validate(_model, req) {
    refuseParams(req, PROVIDER, ['resolution', 'ratio', 'duration']);
    if (req.params.ratio !== undefined && req.images.length > 0) throw errors.invalidRequest('ratio applies to text-to-video only on Kling: the first frame decides the shape.', 'ratio');
    refuseReserved(req, RESERVED);
    if (req.params.resolution !== undefined && req.metadata.mode !== undefined) throw errors.invalidRequest('Give either resolution (720p = std, 1080p = pro) or metadata.mode, not both.', 'metadata');
  },

  // Kling defaults to 5 s in std mode (720p); metadata.mode "pro" asks for 1080p.
  estimate: (_model, req) => secondsEstimate(req, { duration: 5, resolution: req.metadata.mode === 'pro' ? '1080p' : '720p' }),

  expiresAfterS: () => GIVE_UP_AFTER_S,

  acceptsCallback: true,

  async create(call, target, req, opts = {}) {
    const { kind, body } = klingCreate(target.upstreamModel, req, opts.callbackUrl);
    const out = await klingCall(call, target, 'POST', `/videos/${kind}`, body);
    const task = obj(out.data);
    const id = str(task.task_id);
    if (!/^[A-Za-z0-9_-]+$/.test(id)) throw new UpstreamFailure('malformed', 'the upstream accepted the task without a usable task_id', 200);
    return { upstreamId: `${kind}/${id}`, raw: task };
  },

  async get(call, target, upstreamId) {
    const m = KIND_ID.exec(upstreamId);
    if (!m) throw new UpstreamFailure('malformed', 'the stored Kling task id is not {kind}/{task_id}', 0);
    return obj((await klingCall(call, target, 'GET', `/videos/${m[1]}/${m[2]}`)).data);
  },

  view(task) {
    const status = str(task.task_status);
    const state = STATES[status] ?? 'unknown';
    const updatedAtS = typeof task.updated_at === 'number' ? Math.floor(task.updated_at / 1000) : 0;
    const video = obj(Array.isArray(obj(task.task_result).videos) ? (obj(task.task_result).videos as unknown[])[0] : undefined);
    const url = state === 'succeeded' ? str(video.url) : '';
    const seconds = Number(video.duration);
    return {
      state,
      rawStatus: status,
      result: url ? { kind: 'url', url, expiresAtS: (updatedAtS || Math.floor(Date.now() / 1000)) + MEDIA_KEPT_S } : null,
      errorCode: state === 'failed' ? 'task_failed' : '',
      errorMessage: state === 'failed' ? str(task.task_status_msg) || 'Kling reported the task failed.' : '',
      progress: null,
      // Kling reports the length it rendered ("5.042"); the mode (resolution) stays the requested one.
      usage: url && Number.isFinite(seconds) && seconds > 0 ? { unit: 'seconds', units: Math.max(1, Math.round(seconds)) } : null,
      updatedAtS,
    };
  },
};

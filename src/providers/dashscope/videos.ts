import { errors } from '../../http/errors.js';
import { UpstreamFailure } from '../../upstream/failure.js';
import type { ProviderTaskState, VideoAdapter, VideoGenerationRequest } from '../video-types.js';
import { jsonCall, obj, refuseParams, refuseReserved, secondsEstimate, str } from '../video-support.js';
import { signedUrlExpiry } from '../signed-url.js';
import { resolutionOnly, sizesFromCaps, uniqueSizes, type VideoSizeOption } from '../video-sizes.js';
import { dashscopeFailure, dashscopeHeaders, dashscopeUrl } from './api.js';
import { WAN_MODELS, WAN_SIZES, WAN_TASK_KEPT_S, type WanModelFacts } from './wire.js';

// Alibaba Wan through DashScope (asynchronous video synthesis):
//   POST /api/v1/services/aigc/video-generation/video-synthesis  text- and image-to-video
//   POST /api/v1/services/aigc/image2video/video-synthesis       first + last frame (kf2v models)
//        {model, input:{prompt, img_url | first_frame_url + last_frame_url, …}, parameters:{size | resolution, duration, seed, …}}
//        with X-DashScope-Async: enable → {request_id, output:{task_id, task_status:"PENDING"}}
//   GET  /api/v1/tasks/{task_id}        → {request_id, output:{task_status, video_url, code?, message?}, usage}
//   POST /api/v1/tasks/{task_id}/cancel → cancels a PENDING task
// Text-to-video is sized by `size` ("1280*720"), which the gateway derives from resolution + ratio;
// image modes take `resolution` (480P | 720P | 1080P) and the image's shape.

const PROVIDER = 'Wan on DashScope';
const STATES: Record<string, ProviderTaskState> = { PENDING: 'queued', RUNNING: 'running', SUCCEEDED: 'succeeded', FAILED: 'failed', CANCELED: 'cancelled', UNKNOWN: 'expired' };
/** Metadata keys that belong in `input`; every other one goes to `parameters`. */
const INPUT_KEYS = ['negative_prompt', 'audio_url', 'template'];
/** Fields the gateway builds itself; metadata cannot replace them. */
const RESERVED = ['model', 'input', 'parameters', 'prompt', 'img_url', 'first_frame_url', 'last_frame_url', 'size', 'resolution'];
const TASK_ID = /^[A-Za-z0-9_-]+$/;

const range = (a: number, b: number) => Array.from({ length: b - a + 1 }, (_, i) => a + i);

/** A model id outside the table (a newer Wan) is judged by its name and the widest known values. */
function facts(model: string): WanModelFacts {
  const known = WAN_MODELS[model];
  if (known) return known;
  const kind = /kf2v/.test(model) ? 'kf2v' : /i2v/.test(model) ? 'i2v' : 't2v';
  return { kind, resolutions: ['480P', '720P', '1080P'], defaultResolution: '1080P', durations: range(2, 15) };
}

const lower = (r: string) => r.toLowerCase();
const upper = (r: string) => r.toUpperCase();

/** The create path and body in DashScope's format. */
export function wanCreate(upstreamModel: string, req: VideoGenerationRequest): { path: string; body: Record<string, unknown> } {
  const f = facts(upstreamModel);
  const input: Record<string, unknown> = {};
  const parameters: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(req.metadata)) if (!RESERVED.includes(k)) (INPUT_KEYS.includes(k) ? input : parameters)[k] = v;
  if (req.prompt) input.prompt = req.prompt;
  const first = req.images.find((i) => i.role === 'first_frame');
  const last = req.images.find((i) => i.role === 'last_frame');
  const { resolution, ratio, duration, seed, watermark } = req.params;
  if (f.kind === 't2v') {
    if (resolution !== undefined || ratio !== undefined) parameters.size = WAN_SIZES[upper(resolution ?? lower(f.defaultResolution))][ratio ?? '16:9'];
  } else {
    if (resolution !== undefined) parameters.resolution = upper(resolution);
    if (f.kind === 'i2v' && first) input.img_url = first.url;
    if (f.kind === 'kf2v' && first) input.first_frame_url = first.url;
    if (f.kind === 'kf2v' && last) input.last_frame_url = last.url;
  }
  if (duration !== undefined) parameters.duration = duration;
  if (seed !== undefined) parameters.seed = seed;
  if (watermark !== undefined) parameters.watermark = watermark;
  const path = f.kind === 'kf2v' ? '/services/aigc/image2video/video-synthesis' : '/services/aigc/video-generation/video-synthesis';
  return { path, body: { model: upstreamModel, input, parameters } };
}

/** DashScope's times are Beijing wall-clock strings ("2025-07-27 21:05:15.212"). */
function beijingSeconds(v: unknown): number {
  const m = /^(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)/.exec(str(v));
  return m ? Math.floor(Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4] - 8, +m[5], +m[6]) / 1000) : 0;
}

export const dashscopeVideos: VideoAdapter = {
  caps(model) {
    const f = facts(model);
    const modes = f.kind === 't2v' ? (['text'] as const) : f.kind === 'i2v' ? (['first_frame'] as const) : (['first_last_frame'] as const);
    return { modes: [...modes], durations: f.durations, resolutions: f.resolutions.map(lower), ratios: f.kind === 't2v' ? ['16:9', '9:16', '1:1', '4:3', '3:4'] : undefined };
  },

  // DashScope's own text-to-video sizes (832*480 …) and the usual ones; image modes take the image's shape.
  sizes(model) {
    const f = facts(model);
    const own: VideoSizeOption[] = f.resolutions.flatMap((r) => Object.entries(WAN_SIZES[r] ?? {}).map(([ratio, size]) => ({ size: size.replace('*', 'x'), resolution: lower(r), ratio })));
    // The usual sizes only where DashScope has the ratio at that resolution (no 4:3 at 480P).
    const usual = sizesFromCaps(dashscopeVideos.caps(model)).filter((o) => !o.ratio || WAN_SIZES[upper(o.resolution)]?.[o.ratio]);
    const all = uniqueSizes([...own, ...usual]);
    return f.kind === 't2v' ? all : resolutionOnly(all);
  },

  validate(model, req) {
    refuseParams(req, PROVIDER, ['resolution', 'ratio', 'duration', 'seed', 'watermark']);
    const f = facts(model);
    const { ratio, resolution, seed } = req.params;
    if (ratio !== undefined && f.kind !== 't2v') throw errors.invalidRequest('ratio applies to text-to-video only on Wan: the image decides the shape.', 'ratio');
    if (ratio !== undefined && f.kind === 't2v') {
      const tier = upper(resolution ?? lower(f.defaultResolution));
      const allowed = Object.keys(WAN_SIZES[tier] ?? {});
      if (!allowed.includes(ratio)) throw errors.invalidRequest(`ratio must be one of ${allowed.join(', ')} at ${lower(tier)}.`, 'ratio');
    }
    if (seed !== undefined && (seed < 0 || seed > 2147483647)) throw errors.invalidRequest('seed must be between 0 and 2147483647 on Wan.', 'seed');
    refuseReserved(req, RESERVED);
  },

  estimate: (model, req) => secondsEstimate(req, { duration: 5, resolution: lower(facts(model).defaultResolution) }),

  expiresAfterS: () => WAN_TASK_KEPT_S,

  acceptsCallback: false,

  async create(call, target, req) {
    const { path, body } = wanCreate(target.upstreamModel, req);
    const out = await jsonCall(call, { url: dashscopeUrl(target, path), method: 'POST', headers: dashscopeHeaders(target, true), body }, dashscopeFailure);
    const id = str(obj(out.output).task_id);
    if (!TASK_ID.test(id)) throw new UpstreamFailure('malformed', 'the upstream accepted the task without a usable task_id', 200);
    return { upstreamId: id, raw: out };
  },

  get(call, target, upstreamId) {
    return jsonCall(call, { url: dashscopeUrl(target, `/tasks/${encodeURIComponent(upstreamId)}`), method: 'GET', headers: dashscopeHeaders(target) }, dashscopeFailure);
  },

  view(task, now = Date.now()) {
    const output = obj(task.output);
    const usage = obj(task.usage);
    const status = str(output.task_status);
    const state = STATES[status] ?? 'unknown';
    const updatedAtS = beijingSeconds(output.end_time) || beijingSeconds(output.scheduled_time) || beijingSeconds(output.submit_time);
    const url = state === 'succeeded' ? str(output.video_url) : '';
    const seconds = Number(usage.video_duration ?? usage.duration);
    const sr = Number(usage.SR);
    return {
      state,
      rawStatus: status,
      result: url ? { kind: 'url', url, expiresAtS: Math.floor(signedUrlExpiry(url, updatedAtS, now).expiresAt / 1000) } : null,
      errorCode: state === 'expired' ? 'task_unknown' : str(output.code),
      errorMessage: state === 'expired' ? 'DashScope no longer knows the task (task data is kept 24 hours).' : str(output.message),
      progress: null,
      usage: url && Number.isFinite(seconds) && seconds > 0 ? { unit: 'seconds', units: seconds, ...(sr > 0 ? { resolution: `${sr}p` } : {}) } : null,
      updatedAtS,
    };
  },

  // DashScope cancels PENDING tasks only; anything else it refuses with 400 UnsupportedOperation.
  async cancel(call, target, upstreamId) {
    try {
      await jsonCall(call, { url: dashscopeUrl(target, `/tasks/${encodeURIComponent(upstreamId)}/cancel`), method: 'POST', headers: dashscopeHeaders(target) }, dashscopeFailure);
      return { accepted: true, message: '' };
    } catch (err) {
      if (err instanceof UpstreamFailure && err.kind === 'status' && err.status >= 400 && err.status < 500 && err.status !== 429) return { accepted: false, message: err.message };
      throw err;
    }
  },
};

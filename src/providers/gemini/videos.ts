import type { Dispatcher } from 'undici';
import { errors } from '../../http/errors.js';
import { UpstreamFailure } from '../../upstream/failure.js';
import type { Target } from '../../upstream/target.js';
import type { VideoAdapter, VideoCall, VideoGenerationRequest, VideoImage } from '../video-types.js';
import { getFollowingRedirects, imageBytes, sameOrigin, jsonCall, obj, refuseParams, secondsEstimate, str } from '../video-support.js';
import { geminiFailure, geminiHeaders, geminiUrl } from './api.js';
import { VEO_DURATIONS, VEO_FALLBACK, VEO_IMAGE_TYPES, VEO_LONG_ONLY_DURATION, VEO_MAX_REFERENCE_IMAGES, VEO_MODELS, VEO_RATIOS } from './wire.js';

// Veo through the Gemini API (long-running operations):
//   POST /v1beta/models/{model}:predictLongRunning  {instances:[{prompt, image?, lastFrame?, referenceImages?}], parameters}
//        → {name: "models/{model}/operations/{id}"}
//   GET  /v1beta/{name}  → {name, done?, error?, response?:{generateVideoResponse:{generatedSamples, raiMediaFiltered*}}}
//   GET  {sample.video.uri} with the key → the MP4 (through a redirect to a signed location)
// Veo takes images as base64 only, so the gateway fetches the client's URLs (guarded). An
// operation has no status word: not done is running, done holds a response or a google.rpc.Status.

const PROVIDER = 'Veo on the Gemini API';
const OPERATION_NAME = /^models\/[A-Za-z0-9._-]+\/operations\/[A-Za-z0-9_-]+$/;
/** google.rpc.Code names, for an operation's numeric error code. */
const RPC_CODES: Record<number, string> = { 1: 'CANCELLED', 2: 'UNKNOWN', 3: 'INVALID_ARGUMENT', 4: 'DEADLINE_EXCEEDED', 5: 'NOT_FOUND', 7: 'PERMISSION_DENIED', 8: 'RESOURCE_EXHAUSTED', 9: 'FAILED_PRECONDITION', 13: 'INTERNAL', 14: 'UNAVAILABLE' };
/** Veo has no task expiry of its own; an operation still running after this long is given up. */
const GIVE_UP_AFTER_S = 6 * 3600;

const facts = (model: string) => VEO_MODELS[model] ?? VEO_FALLBACK;

async function veoImage(target: Target, img: VideoImage, where: string, signal?: AbortSignal): Promise<Record<string, string>> {
  const { mimeType, base64 } = await imageBytes(target, img.url, where, signal);
  if (!VEO_IMAGE_TYPES.includes(mimeType)) throw errors.invalidRequest(`${where} is ${mimeType}; Veo takes ${VEO_IMAGE_TYPES.join(', ')}.`, where);
  return { bytesBase64Encoded: base64, mimeType };
}

/** The predictLongRunning body; image URLs are fetched and sent inline. */
export async function veoCreateBody(target: Target, req: VideoGenerationRequest, signal?: AbortSignal): Promise<Record<string, unknown>> {
  const instance: Record<string, unknown> = {};
  if (req.prompt) instance.prompt = req.prompt;
  const where = (img: VideoImage) => `images[${req.images.indexOf(img)}]`;
  const first = req.images.find((i) => i.role === 'first_frame');
  const last = req.images.find((i) => i.role === 'last_frame');
  const refs = req.images.filter((i) => i.role === 'reference_image');
  const [image, lastFrame, references] = await Promise.all([
    first ? veoImage(target, first, where(first), signal) : undefined,
    last ? veoImage(target, last, where(last), signal) : undefined,
    Promise.all(refs.map((r) => veoImage(target, r, where(r), signal))),
  ]);
  if (image) instance.image = image;
  if (lastFrame) instance.lastFrame = lastFrame;
  if (references.length) instance.referenceImages = references.map((img) => ({ image: img, referenceType: 'asset' }));
  const parameters: Record<string, unknown> = { ...req.metadata };
  if (req.params.ratio !== undefined) parameters.aspectRatio = req.params.ratio;
  if (req.params.resolution !== undefined) parameters.resolution = req.params.resolution;
  if (req.params.duration !== undefined) parameters.durationSeconds = req.params.duration;
  return { instances: [instance], parameters };
}

function operationName(name: string): string {
  if (!OPERATION_NAME.test(name)) throw new UpstreamFailure('malformed', 'the upstream operation name is not models/{model}/operations/{id}', 200);
  return name;
}

/** The URI of the operation's first generated video ('' when there is none). */
function sampleUri(task: Record<string, unknown>): string {
  const samples = obj(obj(task.response).generateVideoResponse).generatedSamples;
  return Array.isArray(samples) ? str(obj(obj(samples[0]).video).uri) : '';
}

/**
 * GETs the video with the key and follows the redirect to its signed location. The key goes only
 * to the channel's own origin: a URI elsewhere never sees it.
 */
async function download(call: VideoCall, target: Target, task: Record<string, unknown>, range?: string): Promise<Dispatcher.ResponseData> {
  const uri = sampleUri(task);
  if (!uri) throw new UpstreamFailure('malformed', 'the operation holds no video to download', 200);
  return getFollowingRedirects(call, target, uri, (url) => ({ ...(range ? { range } : {}), ...(sameOrigin(url, target.baseUrl) ? { 'x-goog-api-key': target.apiKey } : {}) }));
}

export const geminiVideos: VideoAdapter = {
  caps: (model) => ({ modes: ['text', 'first_frame', 'first_last_frame', 'reference_image'], durations: VEO_DURATIONS, resolutions: facts(model).resolutions, ratios: VEO_RATIOS }),

  validate(_model, req) {
    refuseParams(req, PROVIDER, ['resolution', 'ratio', 'duration']);
    const refs = req.images.filter((i) => i.role === 'reference_image').length;
    if (refs > VEO_MAX_REFERENCE_IMAGES) throw errors.invalidRequest(`Veo takes at most ${VEO_MAX_REFERENCE_IMAGES} reference images.`, 'images');
    const { duration, resolution } = req.params;
    if (duration !== undefined && duration !== VEO_LONG_ONLY_DURATION && ((resolution !== undefined && resolution !== '720p') || refs > 0)) {
      throw errors.invalidRequest(`duration must be ${VEO_LONG_ONLY_DURATION} with 1080p, 4k or reference images (allowed: ${VEO_LONG_ONLY_DURATION}).`, 'duration');
    }
  },

  // Veo defaults to 8 s at 720p.
  estimate: (_model, req) => secondsEstimate(req, { duration: 8, resolution: '720p' }),

  expiresAfterS: () => GIVE_UP_AFTER_S,

  acceptsCallback: false,

  async create(call, target, req) {
    const body = await veoCreateBody(target, req, call.signal);
    const url = geminiUrl(target, `/models/${encodeURIComponent(target.upstreamModel)}:predictLongRunning`);
    const out = await jsonCall(call, { url, method: 'POST', headers: geminiHeaders(target), body }, geminiFailure);
    return { upstreamId: operationName(str(out.name)), raw: out };
  },

  get(call, target, upstreamId) {
    return jsonCall(call, { url: geminiUrl(target, `/${operationName(upstreamId)}`), method: 'GET', headers: geminiHeaders(target) }, geminiFailure);
  },

  view(task) {
    const base = { result: null, errorCode: '', errorMessage: '', progress: null, usage: null, updatedAtS: 0 };
    if (task.done !== true) return { ...base, state: 'running', rawStatus: 'running' };
    const error = obj(task.error);
    if (Object.keys(error).length > 0) {
      const code = typeof error.code === 'number' ? error.code : 2;
      const state = code === 1 ? 'cancelled' : code === 4 ? 'expired' : 'failed';
      return { ...base, state, rawStatus: 'error', errorCode: RPC_CODES[code] ?? String(code), errorMessage: str(error.message) };
    }
    if (sampleUri(task)) return { ...base, state: 'succeeded', rawStatus: 'done', result: { kind: 'download' } };
    const response = obj(obj(task.response).generateVideoResponse);
    const reasons = Array.isArray(response.raiMediaFilteredReasons) ? response.raiMediaFilteredReasons.filter((r) => typeof r === 'string') : [];
    if (Number(response.raiMediaFilteredCount) > 0 || reasons.length > 0) {
      return { ...base, state: 'failed', rawStatus: 'filtered', errorCode: 'content_filtered', errorMessage: reasons.join(' ') || 'The video was filtered by the provider’s safety checks.' };
    }
    return { ...base, state: 'failed', rawStatus: 'empty', errorCode: 'no_video', errorMessage: 'The operation finished without a video.' };
  },

  download,
};

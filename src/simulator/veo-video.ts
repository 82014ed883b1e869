import { VEO_DURATIONS, VEO_IMAGE_TYPES, VEO_MAX_REFERENCE_IMAGES, VEO_MODELS, VEO_RATIOS } from '../providers/gemini/wire.js';
import { sendJson, readJson, type SimContext, type SimRoute, type SimState } from './router.js';
import { newId, openId, ossSignedUrl, outcomeOf, partState, phaseAt, sealId, serveSignedVideo, taskMap, videoSecret, type SimOutcome } from './video-common.js';

// The simulator's Google Veo part, in the Gemini API's wire format:
//   POST /v1beta/models/{model}:predictLongRunning  {instances:[{prompt, image?, lastFrame?, referenceImages?}], parameters}
//        → {name: "models/{model}/operations/{id}"}
//   GET  /v1beta/models/{model}/operations/{id}     → the long-running operation
//   GET  /v1beta/files/{id}:download?alt=media      → 302 to a short-lived signed blob URL (needs the key)
// The key travels in `x-goog-api-key` or `?key=`. Operations have no status word: `done` is absent
// until they finish, then they hold `response` or `error`. Outcome markers in the prompt are those
// of video-common.ts; [moderation] ends with every sample filtered by the RAI check.

const PARAMS = new Set(['aspectRatio', 'resolution', 'durationSeconds', 'negativePrompt', 'personGeneration', 'sampleCount', 'enhancePrompt']);
const OPERATION = /^\/v1beta\/models\/([^/:]+)\/operations\/([a-z0-9]+)$/;
const BLOB = /^\/__sim\/veo\/blobs\/([a-z0-9]+)\.mp4$/;
/** How long the signed blob URL behind a file download stays valid, seconds. */
const BLOB_TTL_S = 300;

interface VeoOperation {
  id: string;
  model: string;
  prompt: string;
  mode: 'text' | 'image' | 'first_last' | 'reference';
  createdMs: number;
  outcome: SimOutcome;
  resolution: string;
  aspectRatio: string;
  durationSeconds: number;
  fileId: string;
}

interface VeoPart {
  operations: Map<string, VeoOperation>;
}

const part = (state: SimState): VeoPart => partState(state, 'veo.video', () => ({ operations: taskMap(state, 'veo.video') }));
const ID_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
/** A file id is the operation id sealed with the signing secret, so files outlive a restart. */
const fileIdOf = (state: SimState, opId: string) => sealId(videoSecret(state), opId, 8, ID_ALPHABET);
const isFileId = (state: SimState, fileId: string) => openId(videoSecret(state), fileId, 8, ID_ALPHABET) !== undefined;

/** A google.rpc.Status error body, as the Gemini API answers every failed call. */
export function googleError(code: number, message: string, status?: string): unknown {
  const statuses: Record<number, string> = { 400: 'INVALID_ARGUMENT', 401: 'UNAUTHENTICATED', 403: 'PERMISSION_DENIED', 404: 'NOT_FOUND', 429: 'RESOURCE_EXHAUSTED', 500: 'INTERNAL', 503: 'UNAVAILABLE', 504: 'DEADLINE_EXCEEDED' };
  return { error: { code, message, status: status ?? statuses[code] ?? (code >= 500 ? 'INTERNAL' : 'FAILED_PRECONDITION') } };
}

export function authenticate(ctx: SimContext): boolean {
  const key = ctx.req.headers['x-goog-api-key'] ?? ctx.url.searchParams.get('key');
  if (typeof key === 'string' && key) return true;
  sendJson(ctx.res, 403, googleError(403, 'Method doesn\'t allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.'));
  return false;
}

function invalid(ctx: SimContext, message: string): undefined {
  sendJson(ctx.res, 400, googleError(400, message));
  return undefined;
}

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47]);
const JPEG = Buffer.from([0xff, 0xd8, 0xff]);

/** Checks one `{bytesBase64Encoded, mimeType}` image; returns an error message when it is not one. */
function imageProblem(v: unknown, where: string): string | undefined {
  const img = v as Record<string, unknown> | null;
  if (!img || typeof img !== 'object') return `${where} must be an image object.`;
  if ('inlineData' in img) return `\`inlineData\` isn't supported by this model. Use \`bytesBase64Encoded\` in ${where}.`;
  if (typeof img.bytesBase64Encoded !== 'string' || !img.bytesBase64Encoded) return `${where}.bytesBase64Encoded is required.`;
  if (typeof img.mimeType !== 'string' || !VEO_IMAGE_TYPES.includes(img.mimeType)) return `${where}.mimeType must be one of ${VEO_IMAGE_TYPES.join(', ')}.`;
  const bytes = Buffer.from(img.bytesBase64Encoded, 'base64');
  const riff = bytes.subarray(0, 4).toString('latin1') === 'RIFF' && bytes.subarray(8, 12).toString('latin1') === 'WEBP';
  if (!bytes.subarray(0, 4).equals(PNG) && !bytes.subarray(0, 3).equals(JPEG) && !riff) return `${where} is not a valid image.`;
  return undefined;
}

function parseCreate(ctx: SimContext, model: string): Omit<VeoOperation, 'id' | 'fileId'> | undefined {
  const spec = VEO_MODELS[model];
  if (!spec) {
    sendJson(ctx.res, 404, googleError(404, `models/${model} is not found for API version v1beta, or is not supported for predictLongRunning. Call ListModels to see the list of available models and their supported methods.`));
    return undefined;
  }
  const body = readJson(ctx, (m) => googleError(400, `Invalid JSON payload received. ${m}`));
  if (!body) return undefined;
  if (!Array.isArray(body.instances) || body.instances.length !== 1) return invalid(ctx, 'instances must hold exactly one instance.');
  const inst = body.instances[0] as Record<string, unknown>;
  if (!inst || typeof inst !== 'object') return invalid(ctx, 'instances[0] must be an object.');
  const prompt = typeof inst.prompt === 'string' ? inst.prompt : '';
  if (inst.prompt !== undefined && typeof inst.prompt !== 'string') return invalid(ctx, 'instances[0].prompt must be a string.');
  for (const k of Object.keys(inst)) if (!['prompt', 'image', 'lastFrame', 'referenceImages', 'video'].includes(k)) return invalid(ctx, `Invalid JSON payload received. Unknown name "${k}" at 'instances[0]': Cannot find field.`);
  let mode: VeoOperation['mode'] = 'text';
  if (inst.image !== undefined) {
    const p = imageProblem(inst.image, 'instances[0].image');
    if (p) return invalid(ctx, p);
    mode = 'image';
  }
  if (inst.lastFrame !== undefined) {
    if (inst.image === undefined) return invalid(ctx, '`lastFrame` is only supported together with `image`.');
    const p = imageProblem(inst.lastFrame, 'instances[0].lastFrame');
    if (p) return invalid(ctx, p);
    mode = 'first_last';
  }
  if (inst.referenceImages !== undefined) {
    const refs = inst.referenceImages;
    if (!Array.isArray(refs) || refs.length === 0 || refs.length > VEO_MAX_REFERENCE_IMAGES) return invalid(ctx, `referenceImages must hold 1 to ${VEO_MAX_REFERENCE_IMAGES} images.`);
    if (inst.image !== undefined) return invalid(ctx, '`referenceImages` cannot be combined with `image`.');
    for (const [i, r] of refs.entries()) {
      const ref = r as Record<string, unknown> | null;
      if (!ref || ref.referenceType !== 'asset') return invalid(ctx, `referenceImages[${i}].referenceType must be "asset".`);
      const p = imageProblem(ref.image, `referenceImages[${i}].image`);
      if (p) return invalid(ctx, p);
    }
    mode = 'reference';
  }
  if (!prompt && mode === 'text') return invalid(ctx, 'A prompt is required.');

  const params = (body.parameters ?? {}) as Record<string, unknown>;
  if (typeof params !== 'object' || Array.isArray(params)) return invalid(ctx, 'parameters must be an object.');
  if ('generateAudio' in params) return invalid(ctx, '`generateAudio` isn\'t supported by this model: audio is always generated.');
  if ('seed' in params) return invalid(ctx, '`seed` isn\'t supported by this model.');
  for (const k of Object.keys(params)) if (!PARAMS.has(k)) return invalid(ctx, `\`${k}\` isn't supported by this model.`);
  const aspectRatio = params.aspectRatio ?? '16:9';
  if (typeof aspectRatio !== 'string' || !VEO_RATIOS.includes(aspectRatio)) return invalid(ctx, `aspectRatio must be one of ${VEO_RATIOS.join(', ')}.`);
  const resolution = params.resolution ?? '720p';
  if (typeof resolution !== 'string' || !spec.resolutions.includes(resolution)) return invalid(ctx, `resolution must be one of ${spec.resolutions.join(', ')} for ${model}.`);
  const durationSeconds = params.durationSeconds ?? 8;
  if (typeof durationSeconds !== 'number' || !VEO_DURATIONS.includes(durationSeconds)) return invalid(ctx, `durationSeconds must be a number, one of ${VEO_DURATIONS.join(', ')}.`);
  if (durationSeconds !== 8 && (resolution !== '720p' || mode === 'reference')) return invalid(ctx, 'durationSeconds must be 8 with 1080p, 4k or reference images.');
  if (params.sampleCount !== undefined && params.sampleCount !== 1) return invalid(ctx, 'sampleCount must be 1.');
  if (params.personGeneration !== undefined) {
    const allowed = mode === 'text' ? 'allow_all' : 'allow_adult';
    if (params.personGeneration !== allowed) return invalid(ctx, `personGeneration must be "${allowed}" for this input.`);
  }
  return { model, prompt, mode, createdMs: Date.now(), outcome: outcomeOf(prompt), resolution, aspectRatio, durationSeconds };
}

/** The operation exactly as GET …/operations/{id} answers it. */
function operationObject(state: SimState, op: VeoOperation, now: number): Record<string, unknown> {
  const name = `models/${op.model}/operations/${op.id}`;
  const { phase } = phaseAt(op.createdMs, op.outcome, state.options.videoSeconds * 1000, now);
  if (phase === 'queued' || phase === 'running') return { name };
  if (phase === 'cancelled') return { name, done: true, error: { code: 1, message: 'The operation was cancelled.' } };
  if (op.outcome === 'failed') return { name, done: true, error: { code: 13, message: 'Video generation failed due to an internal error. Please try again.' } };
  if (op.outcome === 'expired') return { name, done: true, error: { code: 4, message: 'The operation did not finish in time.' } };
  const type = 'type.googleapis.com/google.ai.generativelanguage.v1beta.PredictLongRunningResponse';
  if (op.outcome === 'moderated') {
    return {
      name,
      done: true,
      response: {
        '@type': type,
        generateVideoResponse: {
          raiMediaFilteredCount: 1,
          raiMediaFilteredReasons: ["We encountered an issue with the audio or video for your prompt. Your request hasn't been charged. Please try rephrasing your prompt."],
        },
      },
    };
  }
  const uri = `${state.baseUrl}/v1beta/files/${op.fileId}:download?alt=media`;
  return { name, done: true, response: { '@type': type, generateVideoResponse: { generatedSamples: [{ video: { uri } }] } } };
}

function errorFor(status: number, message: string): unknown {
  return googleError(status, message);
}

function serveBlob(ctx: SimContext): void {
  serveSignedVideo(ctx, videoSecret(ctx.state), BLOB, (id) => isFileId(ctx.state, id));
}

export function veoVideoRoutes(): SimRoute[] {
  return [
    {
      name: 'veo.video.create',
      method: 'POST',
      pattern: /^\/v1beta\/models\/([^/:]+):predictLongRunning$/,
      auth: true,
      authenticate,
      errorBody: errorFor,
      handle(ctx) {
        const model = decodeURIComponent(ctx.params[0]);
        const parsed = parseCreate(ctx, model);
        if (!parsed) return;
        const p = part(ctx.state);
        const id = newId(p.operations, 12, ID_ALPHABET);
        p.operations.set(id, { id, fileId: fileIdOf(ctx.state, id), ...parsed });
        sendJson(ctx.res, 200, { name: `models/${model}/operations/${id}` });
      },
    },
    {
      name: 'veo.video.get',
      method: 'GET',
      pattern: OPERATION,
      auth: true,
      authenticate,
      errorBody: errorFor,
      handle(ctx) {
        const op = part(ctx.state).operations.get(ctx.params[1]);
        if (!op || op.model !== decodeURIComponent(ctx.params[0])) return sendJson(ctx.res, 404, googleError(404, 'Operation not found.'));
        sendJson(ctx.res, 200, operationObject(ctx.state, op, Date.now()));
      },
    },
    {
      name: 'veo.video.download',
      method: 'GET',
      pattern: /^\/v1beta\/files\/([a-z0-9]+):download$/,
      auth: true,
      authenticate,
      errorBody: errorFor,
      handle(ctx) {
        const fileId = ctx.params[0];
        if (ctx.url.searchParams.get('alt') !== 'media') return sendJson(ctx.res, 400, googleError(400, 'Only alt=media downloads are supported for generated files.'));
        if (!isFileId(ctx.state, fileId)) return sendJson(ctx.res, 404, googleError(404, `File files/${fileId} not found.`));
        // Like Google, answer with a redirect to a short-lived signed location of the bytes.
        const location = ossSignedUrl(ctx.state, videoSecret(ctx.state), `/__sim/veo/blobs/${fileId}.mp4`, BLOB_TTL_S);
        ctx.res.writeHead(302, { location, 'content-length': 0 });
        ctx.res.end();
      },
    },
    { name: 'veo.video.file', method: 'GET', pattern: BLOB, auth: false, handle: serveBlob },
    { name: 'veo.video.file', method: 'HEAD', pattern: BLOB, auth: false, handle: serveBlob },
  ];
}

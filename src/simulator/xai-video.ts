import { sendJson, readJson, type SimContext, type SimRoute, type SimState } from './router.js';
import { outcomeOf, partState, phaseAt, sendSampleVideo, taskMap, uuid, type SimOutcome } from './video-common.js';

// The simulator's xAI part, in xAI's wire format (docs.x.ai, video generation):
//   POST /v1/videos/generations   {prompt, model?, duration? 1–15 (8), aspect_ratio?, resolution?
//        480p|720p, image?:{url}, size?, user?, output?} → {request_id}
//   GET  /v1/videos/{request_id}  → {status: pending|done|failed|expired, model, video?:{url,
//        duration, respect_moderation}, error?:{code, message}}
// A finished and a failed generation both answer 200. Other errors are {code, error}: 400 for a
// bad request or key, 422 for a missing field, 404 for an unknown request id. Outcome markers in
// the prompt are those of video-common.ts: [moderation] ends done without a URL and with
// respect_moderation false, [expire] ends expired, [fail] and [cancel] end failed (xAI has no cancel).

const MODELS = ['grok-imagine-video'];
const RATIOS = ['1:1', '16:9', '9:16', '4:3', '3:4', '3:2', '2:3'];
const RESOLUTIONS = ['480p', '720p'];
const SIZES = ['848x480', '1696x960', '1280x720', '1920x1080'];
const FILE = /^\/__sim\/xai\/xai-video-([0-9a-f-]{36})\.mp4$/;

interface XaiTask {
  id: string;
  model: string;
  prompt: string;
  duration: number;
  createdMs: number;
  outcome: SimOutcome;
}

const part = (state: SimState) => partState(state, 'xai.video', () => ({ tasks: taskMap<XaiTask>(state, 'xai.video') }));

const xaiError = (code: string, error: string) => ({ code, error });

function refuse(ctx: SimContext, status: number, message: string): undefined {
  sendJson(ctx.res, status, xaiError(status === 422 ? 'The request body is missing fields' : 'Client specified an invalid argument', message));
  return undefined;
}

function parseCreate(ctx: SimContext): Omit<XaiTask, 'id'> | undefined {
  const body = readJson(ctx, (m) => xaiError('Client specified an invalid argument', m));
  if (!body) return undefined;
  const prompt = body.prompt;
  if (typeof prompt !== 'string' || !prompt) return refuse(ctx, 422, 'prompt: field required');
  const model = body.model ?? MODELS[0];
  if (typeof model !== 'string' || !MODELS.includes(model)) return refuse(ctx, 400, `The model ${String(model)} does not exist or your team does not have access to it.`);
  const duration = body.duration ?? 8;
  if (typeof duration !== 'number' || !Number.isInteger(duration) || duration < 1 || duration > 15) return refuse(ctx, 400, 'duration must be an integer in [1, 15].');
  if (body.aspect_ratio !== undefined && body.aspect_ratio !== null && !RATIOS.includes(String(body.aspect_ratio))) return refuse(ctx, 400, `aspect_ratio must be one of ${RATIOS.join(', ')}.`);
  if (body.resolution !== undefined && body.resolution !== null && !RESOLUTIONS.includes(String(body.resolution))) return refuse(ctx, 400, `resolution must be one of ${RESOLUTIONS.join(', ')}.`);
  if (body.size !== undefined && body.size !== null && !SIZES.includes(String(body.size))) return refuse(ctx, 400, `size must be one of ${SIZES.join(', ')}.`);
  if (body.image !== undefined && body.image !== null) {
    const url = (body.image as { url?: unknown }).url;
    if (typeof body.image !== 'object' || typeof url !== 'string' || !/^(https?:\/\/|data:image\/(png|jpeg|jpg|webp);base64,)/.test(url)) return refuse(ctx, 400, 'image.url must be an http(s) URL or a data:image/…;base64 URL.');
  }
  if (body.user !== undefined && typeof body.user !== 'string') return refuse(ctx, 400, 'user must be a string.');
  return { model, prompt, duration, createdMs: Date.now(), outcome: outcomeOf(prompt) };
}

/** The answer of GET /v1/videos/{request_id}. */
function resultObject(state: SimState, t: XaiTask, now: number): Record<string, unknown> {
  const { phase } = phaseAt(t.createdMs, t.outcome, state.options.videoSeconds * 1000, now);
  if (phase === 'queued' || phase === 'running') return { status: 'pending', model: t.model };
  if (t.outcome === 'expired') return { status: 'expired', model: t.model };
  if (t.outcome === 'failed' || t.outcome === 'cancelled') {
    return { status: 'failed', model: t.model, video: { duration: 0, respect_moderation: true }, error: { code: 'internal_error', message: 'Video generation failed.' } };
  }
  if (t.outcome === 'moderated') return { status: 'done', model: t.model, video: { duration: 0, respect_moderation: false } };
  return { status: 'done', model: t.model, video: { url: `${state.baseUrl}/__sim/xai/xai-video-${t.id}.mp4`, duration: t.duration, respect_moderation: true } };
}

function errorFor(status: number, message: string): unknown {
  return xaiError(status === 429 ? 'Too many requests' : status >= 500 ? 'Internal error' : 'Client specified an invalid argument', message);
}

function authenticate(ctx: SimContext): boolean {
  if (/^Bearer \S+$/.test(String(ctx.req.headers.authorization ?? ''))) return true;
  // xAI answers a missing or wrong key with 400.
  sendJson(ctx.res, 400, xaiError('Client specified an invalid argument', 'Incorrect API key provided. You can obtain an API key from https://console.x.ai.'));
  return false;
}

// The video link is public, as xAI's are; a file is served while the simulator knows its task.
function serveFile(ctx: SimContext): void {
  const id = FILE.exec(ctx.url.pathname)?.[1] ?? '';
  const t = part(ctx.state).tasks.get(id);
  if (!t || resultObject(ctx.state, t, Date.now()).status !== 'done' || t.outcome !== 'succeeded') return sendJson(ctx.res, 404, xaiError('Not found', 'No such video.'));
  sendSampleVideo(ctx);
}

export function xaiVideoRoutes(): SimRoute[] {
  return [
    {
      name: 'xai.video.create',
      method: 'POST',
      pattern: /^\/v1\/videos\/generations$/,
      auth: true,
      authenticate,
      errorBody: errorFor,
      handle(ctx) {
        const parsed = parseCreate(ctx);
        if (!parsed) return;
        const id = uuid();
        part(ctx.state).tasks.set(id, { id, ...parsed });
        sendJson(ctx.res, 200, { request_id: id });
      },
    },
    {
      name: 'xai.video.get',
      method: 'GET',
      pattern: /^\/v1\/videos\/([0-9a-f-]{36})$/,
      auth: true,
      authenticate,
      errorBody: errorFor,
      handle(ctx) {
        const t = part(ctx.state).tasks.get(ctx.params[0]);
        if (!t) return sendJson(ctx.res, 404, xaiError('Not found', `No deferred request with id ${ctx.params[0]}.`));
        sendJson(ctx.res, 200, resultObject(ctx.state, t, Date.now()));
      },
    },
    { name: 'xai.video.file', method: 'GET', pattern: FILE, auth: false, handle: serveFile },
    { name: 'xai.video.file', method: 'HEAD', pattern: FILE, auth: false, handle: serveFile },
  ];
}

import { LUMA_MODELS, LUMA_RATIOS } from '../providers/luma/wire.js';
import { readJson, sendJson, type SimContext, type SimRoute, type SimState } from './router.js';
import { outcomeOf, partState, phaseAt, phaseChangesAt, scheduleCallbacks, sealId, sendSampleVideo, type SimOutcome, taskMap, uuid, videoSecret } from './video-common.js';

// The simulator's Luma part, in Luma Dream Machine's wire format (docs.lumalabs.ai, the SDKs):
//   POST /dream-machine/v1/generations/video → the generation {id, generation_type, state:"queued", …}
//   GET  /dream-machine/v1/generations/{id}  → {id, state, failure_reason, assets:{video, image}, created_at, model, request}
// `Authorization: Bearer <key>` (a key holding "revoked" stands for one Luma refuses); errors are
// {"detail": "…"}. Outcome markers in the prompt are those of video-common.ts; Luma has one failed
// state whose failure_reason words the cause ([moderation]: the moderation wording). Results are
// public CDN links; keyframes must be image URLs (Luma fetches them; no base64).

const FILE = /^\/__sim\/luma\/([0-9a-f-]{36})\/([0-9a-f]{16})\.mp4$/;

interface LumaTask {
  id: string;
  model: string;
  prompt: string;
  request: Record<string, unknown>;
  createdMs: number;
  outcome: SimOutcome;
  callbackUrl: string;
}

const part = (state: SimState) => partState(state, 'luma.video', () => ({ tasks: taskMap<LumaTask>(state, 'luma.video') }));

const detail = (ctx: SimContext, status: number, message: string): undefined => {
  sendJson(ctx.res, status, { detail: message });
  return undefined;
};

function authenticate(ctx: SimContext): boolean {
  const m = /^Bearer (\S+)$/.exec(String(ctx.req.headers.authorization ?? ''));
  if (m && !m[1].includes('revoked')) return true;
  detail(ctx, 401, 'Invalid API key');
  return false;
}

function parseCreate(ctx: SimContext): Omit<LumaTask, 'id'> | undefined {
  const body = readJson(ctx, () => ({ detail: 'Invalid JSON body' }));
  if (!body) return undefined;
  const model = typeof body.model === 'string' ? body.model : body.model === undefined ? 'ray-2' : '';
  const spec = LUMA_MODELS[model];
  if (!spec) return detail(ctx, 400, `Invalid model: must be one of ${Object.keys(LUMA_MODELS).join(', ')}`);
  const prompt = body.prompt ?? '';
  if (typeof prompt !== 'string' || prompt.length > 5000) return detail(ctx, 400, 'Invalid prompt');
  const keyframes = body.keyframes;
  if (keyframes !== undefined) {
    if (!keyframes || typeof keyframes !== 'object' || Array.isArray(keyframes)) return detail(ctx, 400, 'Invalid keyframes');
    for (const [name, frame] of Object.entries(keyframes as Record<string, unknown>)) {
      const f = frame as { type?: unknown; url?: unknown; id?: unknown };
      if (name !== 'frame0' && name !== 'frame1') return detail(ctx, 400, `Invalid keyframe ${name}: frame0 or frame1`);
      if (f?.type === 'image' && (typeof f.url !== 'string' || !/^https?:\/\//.test(f.url))) return detail(ctx, 400, `Invalid ${name}: url must be an image URL`);
      if (f?.type !== 'image' && f?.type !== 'generation') return detail(ctx, 400, `Invalid ${name}: type must be image or generation`);
    }
  } else if (!prompt) return detail(ctx, 400, 'prompt is required');
  const resolution = body.resolution ?? spec.defaultResolution;
  if (typeof resolution !== 'string' || !spec.resolutions.includes(resolution)) return detail(ctx, 400, `Invalid resolution: must be one of ${spec.resolutions.join(', ')}`);
  const duration = body.duration ?? '5s';
  if (typeof duration !== 'string' || !spec.durations.includes(duration)) return detail(ctx, 400, `Invalid duration: must be one of ${spec.durations.join(', ')}`);
  const ratio = body.aspect_ratio ?? '16:9';
  if (typeof ratio !== 'string' || !LUMA_RATIOS.includes(ratio)) return detail(ctx, 400, `Invalid aspect_ratio: must be one of ${LUMA_RATIOS.join(', ')}`);
  if (body.loop !== undefined && typeof body.loop !== 'boolean') return detail(ctx, 400, 'Invalid loop: must be a boolean');
  const callbackUrl = body.callback_url ?? '';
  if (typeof callbackUrl !== 'string' || (callbackUrl && !/^https?:\/\//.test(callbackUrl))) return detail(ctx, 400, 'Invalid callback_url');
  const request = { ...body, model, resolution, duration, aspect_ratio: ratio, generation_type: 'video' };
  return { model, prompt, request, createdMs: Date.now(), outcome: outcomeOf(prompt), callbackUrl };
}

const REASON: Partial<Record<SimOutcome, string>> = {
  failed: 'Generation failed due to an internal error',
  moderated: 'Your request was flagged by our moderation system',
  cancelled: 'Generation was cancelled',
  expired: 'Generation timed out',
};

const videoIdOf = (state: SimState, id: string) => sealId(videoSecret(state), id, 16, '0123456789abcdef').slice(id.length);

/** The generation as GET /generations/{id} answers it. */
function generation(state: SimState, t: LumaTask, now: number): Record<string, unknown> {
  const { phase } = phaseAt(t.createdMs, t.outcome, state.options.videoSeconds * 1000, now);
  const base = { id: t.id, generation_type: 'video', created_at: new Date(t.createdMs).toISOString(), model: t.model, request: t.request, failure_reason: null, assets: null };
  if (phase === 'queued') return { ...base, state: 'queued' };
  if (phase === 'running') return { ...base, state: 'dreaming' };
  if (phase === 'cancelled' || t.outcome !== 'succeeded') return { ...base, state: 'failed', failure_reason: REASON[phase === 'cancelled' ? 'cancelled' : t.outcome] ?? REASON.failed };
  const file = `${state.baseUrl}/__sim/luma/${t.id}/${videoIdOf(state, t.id)}`;
  return { ...base, state: 'completed', assets: { video: `${file}.mp4`, image: `${file}.jpg` } };
}

function errorFor(status: number, message: string): unknown {
  if (status === 429) return { detail: 'Rate limit exceeded' };
  if (status === 401) return { detail: 'Invalid API key' };
  return { detail: status >= 500 ? `Internal server error (${message})` : message };
}

function serveFile(ctx: SimContext): void {
  const [, id, videoId] = FILE.exec(ctx.url.pathname) ?? [];
  if (!id || videoIdOf(ctx.state, id) !== videoId) return sendJson(ctx.res, 404, { detail: 'Not Found' });
  sendSampleVideo(ctx);
}

export function lumaVideoRoutes(): SimRoute[] {
  return [
    {
      name: 'luma.video.create',
      method: 'POST',
      pattern: /^\/dream-machine\/v1\/generations(\/video)?$/,
      auth: true,
      authenticate,
      errorBody: errorFor,
      handle(ctx) {
        const parsed = parseCreate(ctx);
        if (!parsed) return;
        const t: LumaTask = { id: uuid(), ...parsed };
        part(ctx.state).tasks.set(t.id, t);
        sendJson(ctx.res, 201, generation(ctx.state, t, t.createdMs));
        if (t.callbackUrl) {
          scheduleCallbacks(ctx.state, 'luma.video.callback', t.callbackUrl, phaseChangesAt(t.createdMs, ctx.state.options.videoSeconds * 1000), (now) => {
            const body = generation(ctx.state, t, now);
            return { status: String(body.state), body };
          });
        }
      },
    },
    {
      name: 'luma.video.get',
      method: 'GET',
      pattern: /^\/dream-machine\/v1\/generations\/([0-9a-f-]{36})$/,
      auth: true,
      authenticate,
      errorBody: errorFor,
      handle(ctx) {
        const t = part(ctx.state).tasks.get(ctx.params[0]);
        if (!t) return void detail(ctx, 404, 'Generation not found');
        sendJson(ctx.res, 200, generation(ctx.state, t, Date.now()));
      },
    },
    { name: 'luma.video.file', method: 'GET', pattern: FILE, auth: false, handle: serveFile },
    { name: 'luma.video.file', method: 'HEAD', pattern: FILE, auth: false, handle: serveFile },
  ];
}

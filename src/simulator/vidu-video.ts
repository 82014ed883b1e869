import { VIDU2_8S_RESOLUTION, VIDU_MAX_REFERENCES, VIDU_MODELS, type ViduEndpoint } from '../providers/vidu/wire.js';
import { readJson, sendJson, type SimContext, type SimRoute, type SimState } from './router.js';
import { newId, ossSignedUrl, outcomeOf, partState, phaseAt, phaseChangesAt, scheduleCallbacks, serveSignedVideo, type SimOutcome, taskMap, videoSecret } from './video-common.js';

// The simulator's Vidu part, in Vidu's wire format (platform.vidu.com):
//   POST /ent/v2/text2video | img2video | start-end2video | reference2video → {task_id, state:"created", model, …}
//   GET  /ent/v2/tasks/{id}/creations → {id, state, err_code, credits, payload, creations:[{id, url, cover_url}]}
//   POST /ent/v2/tasks/{id}/cancel    → {} while the task waits; 400 BadRequest after
// Every call carries `Authorization: Token <key>` (a key holding "revoked" stands for a key Vidu
// no longer accepts). Errors are {code, reason, message, metadata:{trace_id}}. Outcome markers in
// the prompt are those of video-common.ts: [fail] ends failed with InternalServiceFailure,
// [moderation] with CreationPolicyViolation, [cancel] with UserCancelled; Vidu has no expired
// state, so [expire] ends failed too. creations[].url is a signed link valid 24 hours.

const FILE = /^\/__sim\/vidu\/creations\/([0-9]+)\.mp4$/;
const URL_TTL_S = 86_400;

interface ViduTask {
  id: string;
  endpoint: ViduEndpoint;
  model: string;
  prompt: string;
  duration: number;
  resolution: string;
  createdMs: number;
  outcome: SimOutcome;
  cancelledMs: number | null;
  callbackUrl: string;
}

const part = (state: SimState) => partState(state, 'vidu.video', () => ({ tasks: taskMap<ViduTask>(state, 'vidu.video') }));

const traceId = () => Array.from({ length: 32 }, () => '0123456789abcdef'[Math.floor(Math.random() * 16)]).join('');

export function viduError(code: number, reason: string, message: string): unknown {
  return { code, reason, message, metadata: { trace_id: traceId() } };
}

function invalid(ctx: SimContext, message: string, reason = 'FieldInvalid'): undefined {
  sendJson(ctx.res, 400, viduError(400, reason, message));
  return undefined;
}

function authenticate(ctx: SimContext): boolean {
  const m = /^Token (\S+)$/.exec(String(ctx.req.headers.authorization ?? ''));
  if (m && !m[1].includes('revoked')) return true;
  sendJson(ctx.res, 401, viduError(401, 'Unauthorized', 'unauthorized'));
  return false;
}

const isImage = (v: unknown) => typeof v === 'string' && /^(https?:\/\/|data:image\/(png|jpeg|jpg|webp);base64,)/.test(v);

function parseCreate(ctx: SimContext, endpoint: ViduEndpoint): Omit<ViduTask, 'id'> | undefined {
  const body = readJson(ctx, (m) => viduError(400, 'BadRequest', m));
  if (!body) return undefined;
  const model = typeof body.model === 'string' ? body.model : '';
  if (!model) return invalid(ctx, 'field is missing or empty: model', 'FieldLacking');
  const spec = VIDU_MODELS[model];
  if (!spec || !spec.endpoints.includes(endpoint)) return invalid(ctx, `invalid field: model (${endpoint} takes ${Object.keys(VIDU_MODELS).filter((k) => VIDU_MODELS[k].endpoints.includes(endpoint)).join(', ')})`);
  const prompt = body.prompt ?? '';
  if (typeof prompt !== 'string' || prompt.length > 2000) return invalid(ctx, 'invalid field: prompt (at most 2000 characters)');
  if ((endpoint === 'text2video' || endpoint === 'reference2video') && !prompt) return invalid(ctx, 'field is missing or empty: prompt', 'FieldLacking');
  const images = body.images;
  if (endpoint === 'text2video') {
    if (images !== undefined) return invalid(ctx, 'unwanted field: images', 'FieldUnwanted');
  } else {
    const want = endpoint === 'img2video' ? [1, 1] : endpoint === 'start-end2video' ? [2, 2] : [1, VIDU_MAX_REFERENCES[model] ?? 7];
    if (!Array.isArray(images) || !images.length) return invalid(ctx, 'field is missing or empty: images', 'FieldLacking');
    if (images.length < want[0] || images.length > want[1]) return invalid(ctx, `field item count out of range: images (${want[0]}–${want[1]})`, 'FieldItemCountOutOfRange');
    if (!images.every(isImage)) return invalid(ctx, 'invalid image format', 'ImageFormatInvalid');
  }
  const durations = endpoint === 'start-end2video' ? spec.startEndDurations : spec.durations;
  const duration = body.duration ?? spec.defaultDuration;
  if (typeof duration !== 'number' || !durations.includes(duration)) return invalid(ctx, `invalid field: duration (${model}: ${durations.join(', ')})`);
  const resolution = body.resolution ?? (duration === 8 && model === 'vidu2.0' ? VIDU2_8S_RESOLUTION : spec.defaultResolution);
  if (typeof resolution !== 'string' || !spec.resolutions.includes(resolution)) return invalid(ctx, `invalid field: resolution (${model}: ${spec.resolutions.join(', ')})`);
  if (model === 'vidu2.0' && duration === 8 && resolution !== VIDU2_8S_RESOLUTION) return invalid(ctx, `invalid field: resolution (vidu2.0 8s: ${VIDU2_8S_RESOLUTION})`);
  if (body.aspect_ratio !== undefined) {
    if (endpoint === 'img2video' || endpoint === 'start-end2video') return invalid(ctx, 'unwanted field: aspect_ratio', 'FieldUnwanted');
    if (typeof body.aspect_ratio !== 'string' || !spec.ratios.includes(body.aspect_ratio)) return invalid(ctx, `invalid field: aspect_ratio (${model}: ${spec.ratios.join(', ')})`);
  }
  if (body.seed !== undefined && (typeof body.seed !== 'number' || !Number.isInteger(body.seed) || body.seed < 0)) return invalid(ctx, 'invalid field: seed');
  for (const k of ['bgm', 'audio', 'off_peak', 'watermark', 'is_rec']) if (body[k] !== undefined && typeof body[k] !== 'boolean') return invalid(ctx, `invalid field: ${k}`);
  if (body.movement_amplitude !== undefined && !['auto', 'small', 'medium', 'large'].includes(String(body.movement_amplitude))) return invalid(ctx, 'invalid field: movement_amplitude');
  const callbackUrl = body.callback_url ?? '';
  if (typeof callbackUrl !== 'string' || (callbackUrl && !/^https?:\/\//.test(callbackUrl))) return invalid(ctx, 'invalid field: callback_url');
  return { endpoint, model, prompt, duration, resolution, createdMs: Date.now(), outcome: outcomeOf(prompt), cancelledMs: null, callbackUrl };
}

const ERR_CODE: Partial<Record<SimOutcome, string>> = { failed: 'InternalServiceFailure', moderated: 'CreationPolicyViolation', cancelled: 'UserCancelled', expired: 'InternalServiceFailure' };

/** The task as GET /ent/v2/tasks/{id}/creations answers it. */
function creations(state: SimState, t: ViduTask, now: number): Record<string, unknown> {
  const { phase } = phaseAt(t.createdMs, t.outcome, state.options.videoSeconds * 1000, now, t.cancelledMs);
  const base = { id: t.id, err_code: '', credits: 0, payload: '', bgm: false, off_peak: false, creations: [] as unknown[] };
  if (phase === 'queued') return { ...base, state: now < t.createdMs + state.options.videoSeconds * 100 ? 'created' : 'queueing' };
  if (phase === 'running') return { ...base, state: 'processing' };
  if (phase === 'cancelled') return { ...base, state: 'failed', err_code: 'UserCancelled' };
  if (t.outcome !== 'succeeded') return { ...base, state: 'failed', err_code: ERR_CODE[t.outcome] ?? 'InternalServiceFailure' };
  const ttl = Math.min(URL_TTL_S, state.options.urlTtlS);
  const url = ossSignedUrl(state, videoSecret(state), `/__sim/vidu/creations/${t.id}.mp4`, ttl, now);
  // Vidu bills credits per second by model and resolution.
  const perSecond = t.resolution === '1080p' ? 4 : 2;
  return { ...base, state: 'success', credits: perSecond * t.duration, creations: [{ id: `${t.id}0`, url, cover_url: url.replace('.mp4', '.jpg') }] };
}

function errorFor(status: number, message: string): unknown {
  if (status === 429) return viduError(429, 'TooManyRequests', 'too many requests');
  if (status === 401) return viduError(401, 'Unauthorized', 'unauthorized');
  if (status === 404) return viduError(404, 'TaskNotFound', 'task not found');
  if (status >= 500) return viduError(500, 'InternalServiceFailure', `internal service failure: ${message}`);
  return viduError(400, 'BadRequest', message);
}

const serveFile = (ctx: SimContext) => serveSignedVideo(ctx, videoSecret(ctx.state), FILE, () => true);

const task = (ctx: SimContext) => part(ctx.state).tasks.get(ctx.params[0]);

export function viduVideoRoutes(): SimRoute[] {
  return [
    {
      name: 'vidu.video.create',
      method: 'POST',
      pattern: /^\/ent\/v2\/(text2video|img2video|start-end2video|reference2video)$/,
      auth: true,
      authenticate,
      errorBody: errorFor,
      handle(ctx) {
        const endpoint = ctx.params[0] as ViduEndpoint;
        const parsed = parseCreate(ctx, endpoint);
        if (!parsed) return;
        const p = part(ctx.state);
        const t: ViduTask = { id: newId(p.tasks, 16), ...parsed };
        p.tasks.set(t.id, t);
        sendJson(ctx.res, 200, { task_id: t.id, state: 'created', model: t.model, prompt: t.prompt, duration: t.duration, resolution: t.resolution, credits: 0, created_at: new Date(t.createdMs).toISOString() });
        // Vidu POSTs the task, as the query answers it, to callback_url when its state changes.
        if (t.callbackUrl) {
          scheduleCallbacks(ctx.state, 'vidu.video.callback', t.callbackUrl, phaseChangesAt(t.createdMs, ctx.state.options.videoSeconds * 1000), (now) => {
            const body = creations(ctx.state, t, now);
            return { status: String(body.state), body };
          });
        }
      },
    },
    {
      name: 'vidu.video.get',
      method: 'GET',
      pattern: /^\/ent\/v2\/tasks\/([0-9]+)\/creations$/,
      auth: true,
      authenticate,
      errorBody: errorFor,
      handle(ctx) {
        const t = task(ctx);
        if (!t) return sendJson(ctx.res, 404, viduError(404, 'TaskNotFound', 'task not found'));
        sendJson(ctx.res, 200, creations(ctx.state, t, Date.now()));
      },
    },
    {
      name: 'vidu.video.cancel',
      method: 'POST',
      pattern: /^\/ent\/v2\/tasks\/([0-9]+)\/cancel$/,
      auth: true,
      authenticate,
      errorBody: errorFor,
      handle(ctx) {
        const t = task(ctx);
        if (!t) return sendJson(ctx.res, 404, viduError(404, 'TaskNotFound', 'task not found'));
        const now = Date.now();
        const { phase } = phaseAt(t.createdMs, t.outcome, ctx.state.options.videoSeconds * 1000, now, t.cancelledMs);
        if (phase !== 'queued') return invalid(ctx, `task state is ${phase === 'running' ? 'scheduled' : 'finished'}, can not cancel`, 'BadRequest');
        t.cancelledMs = now;
        part(ctx.state).tasks.set(t.id, t);
        sendJson(ctx.res, 200, {});
      },
    },
    { name: 'vidu.video.file', method: 'GET', pattern: FILE, auth: false, handle: serveFile },
    { name: 'vidu.video.file', method: 'HEAD', pattern: FILE, auth: false, handle: serveFile },
  ];
}

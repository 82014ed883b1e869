import { createHmac, timingSafeEqual } from 'node:crypto';
import { KLING_MODELS, KLING_RATIOS, KLING_SIMULATOR_ACCOUNT } from '../providers/kling/wire.js';
import { sendJson, readJson, type SimContext, type SimRoute, type SimState } from './router.js';
import { newId, outcomeOf, partState, phaseAt, phaseChangesAt, scheduleCallbacks, sealId, sendSampleVideo, type SimOutcome, taskMap, videoSecret } from './video-common.js';

// The simulator's Kling part, in Kling's wire format:
//   POST /v1/videos/text2video | /v1/videos/image2video  → {code:0, message, request_id, data:{task_id, task_status, …}}
//   GET  /v1/videos/{text2video|image2video}/{task_id}   → the task, under the path it was created at
//   GET  /account/costs?start_time&end_time              → the account's resource packs bought in that window
// Every call carries `Authorization: Bearer <JWT>`, HS256-signed with the account's secret key,
// `iss` = access key, checked with `nbf`/`exp` like Kling (401 with codes 1000–1004). Results are
// public CDN-style links without a key. Outcome markers in the prompt are those of video-common.ts;
// Kling has no cancelled or expired state, so those end `failed` too.

type Kind = 'text2video' | 'image2video';
const FILE = /^\/__sim\/kling\/videos\/([0-9]+)\/([0-9a-f]{32})\.mp4$/;

interface KlingTask {
  id: string;
  kind: Kind;
  model: string;
  prompt: string;
  mode: string;
  duration: number;
  aspectRatio: string;
  hasTail: boolean;
  externalTaskId: string;
  createdMs: number;
  /** Where to POST status changes ('' = nowhere). */
  callbackUrl: string;
  outcome: SimOutcome;
  videoId: string;
}

interface KlingPart {
  tasks: Map<string, KlingTask>;
}

const part = (state: SimState): KlingPart => partState(state, 'kling.video', () => ({ tasks: taskMap(state, 'kling.video') }));

export const requestId = () => `sim-${Date.now().toString(36)}-${Math.floor(Math.random() * 1e9).toString(36)}`;

export function klingError(code: number, message: string): unknown {
  return { code, message, request_id: requestId() };
}

function b64urlJson(s: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(Buffer.from(s, 'base64url').toString('utf8'));
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** Verifies the per-request JWT as Kling does; answers 401 with Kling's code when it does not hold. */
export function authenticate(ctx: SimContext): boolean {
  const deny = (code: number, message: string) => {
    sendJson(ctx.res, 401, klingError(code, message));
    return false;
  };
  const auth = String(ctx.req.headers.authorization ?? '');
  if (!auth) return deny(1001, 'Authorization is empty');
  const m = /^Bearer ([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)$/.exec(auth);
  if (!m) return deny(1002, 'Authorization is invalid');
  const header = b64urlJson(m[1]);
  const claims = b64urlJson(m[2]);
  if (!header || !claims || header.alg !== 'HS256') return deny(1002, 'Authorization is invalid');
  if (claims.iss !== KLING_SIMULATOR_ACCOUNT.apiKey) return deny(1000, 'Authentication failed');
  const want = createHmac('sha256', KLING_SIMULATOR_ACCOUNT.apiSecret).update(`${m[1]}.${m[2]}`).digest();
  const given = Buffer.from(m[3], 'base64url');
  if (given.length !== want.length || !timingSafeEqual(given, want)) return deny(1002, 'Authorization is invalid');
  const now = Date.now() / 1000;
  if (typeof claims.nbf === 'number' && now < claims.nbf) return deny(1003, 'Authorization is not yet valid');
  if (typeof claims.exp !== 'number' || now >= claims.exp) return deny(1004, 'Authorization has expired');
  return true;
}

function invalid(ctx: SimContext, message: string): undefined {
  sendJson(ctx.res, 400, klingError(1201, message));
  return undefined;
}

function parseCreate(ctx: SimContext, kind: Kind): Omit<KlingTask, 'id' | 'videoId'> | undefined {
  const body = readJson(ctx, (m) => klingError(1200, m));
  if (!body) return undefined;
  const model = body.model_name ?? 'kling-v1';
  if (typeof model !== 'string' || !KLING_MODELS[model]) return invalid(ctx, `model_name is invalid, must be one of ${Object.keys(KLING_MODELS).join(', ')}`);
  const spec = KLING_MODELS[model];
  const prompt = body.prompt ?? '';
  if (typeof prompt !== 'string' || prompt.length > 2500) return invalid(ctx, 'prompt must be a string of at most 2500 characters');
  if (body.negative_prompt !== undefined && (typeof body.negative_prompt !== 'string' || body.negative_prompt.length > 2500)) return invalid(ctx, 'negative_prompt must be a string of at most 2500 characters');
  if (body.cfg_scale !== undefined && (typeof body.cfg_scale !== 'number' || body.cfg_scale < 0 || body.cfg_scale > 1)) return invalid(ctx, 'cfg_scale must be a number in [0, 1]');
  const mode = body.mode ?? 'std';
  if (mode !== 'std' && mode !== 'pro') return invalid(ctx, 'mode must be std or pro');
  const duration = body.duration ?? '5';
  if (duration !== '5' && duration !== '10') return invalid(ctx, 'duration must be "5" or "10"');
  if (body.sound !== undefined && (!spec.sound || (body.sound !== 'on' && body.sound !== 'off'))) return invalid(ctx, spec.sound ? 'sound must be on or off' : `sound is not supported by ${model}`);
  if (body.callback_url !== undefined && typeof body.callback_url !== 'string') return invalid(ctx, 'callback_url must be a string');
  if (body.external_task_id !== undefined && typeof body.external_task_id !== 'string') return invalid(ctx, 'external_task_id must be a string');
  let hasTail = false;
  let aspectRatio = '16:9';
  if (kind === 'text2video') {
    if (!prompt) return invalid(ctx, 'prompt is required');
    if (body.image !== undefined || body.image_tail !== undefined) return invalid(ctx, 'image is not supported by text2video');
    const r = body.aspect_ratio ?? '16:9';
    if (typeof r !== 'string' || !KLING_RATIOS.includes(r)) return invalid(ctx, `aspect_ratio must be one of ${KLING_RATIOS.join(', ')}`);
    aspectRatio = r;
  } else {
    const isImage = (v: unknown) => typeof v === 'string' && (/^https?:\/\//.test(v) || /^[A-Za-z0-9+/]+={0,2}$/.test(v));
    if (typeof body.image === 'string' && body.image.startsWith('data:')) return invalid(ctx, 'image must be a URL or Base64 without the data: prefix');
    if (!isImage(body.image)) return invalid(ctx, 'image is required: a URL or Base64 of the first frame');
    if (body.image_tail !== undefined) {
      if (!spec.tail) return invalid(ctx, `image_tail is not supported by ${model}`);
      if (!isImage(body.image_tail)) return invalid(ctx, 'image_tail must be a URL or Base64 without the data: prefix');
      hasTail = true;
    }
    if (body.aspect_ratio !== undefined) return invalid(ctx, 'aspect_ratio is not supported by image2video: the image decides');
  }
  return {
    kind,
    model,
    prompt,
    mode,
    duration: Number(duration),
    aspectRatio,
    hasTail,
    externalTaskId: typeof body.external_task_id === 'string' ? body.external_task_id : '',
    createdMs: Date.now(),
    outcome: outcomeOf(prompt),
    callbackUrl: typeof body.callback_url === 'string' ? body.callback_url : '',
  };
}

const STATUS_MSG: Partial<Record<SimOutcome, string>> = {
  failed: 'Video generation failed, please try again later.',
  moderated: 'Failure to pass the risk control system.',
  cancelled: 'The task was cancelled.',
  expired: 'The task timed out.',
};

/** The `data` of Kling's task answer. */
function taskData(state: SimState, t: KlingTask, now: number): Record<string, unknown> {
  const { phase, since } = phaseAt(t.createdMs, t.outcome, state.options.videoSeconds * 1000, now);
  const status = phase === 'queued' ? 'submitted' : phase === 'running' ? 'processing' : phase === 'cancelled' || t.outcome !== 'succeeded' ? 'failed' : 'succeed';
  const out: Record<string, unknown> = {
    task_id: t.id,
    task_status: status,
    task_status_msg: status === 'failed' ? (STATUS_MSG[phase === 'cancelled' ? 'cancelled' : t.outcome] ?? '') : '',
    task_info: t.externalTaskId ? { external_task_id: t.externalTaskId } : {},
    created_at: t.createdMs,
    updated_at: since,
  };
  if (status === 'succeed') {
    out.task_result = { videos: [{ id: t.videoId, url: `${state.baseUrl}/__sim/kling/videos/${t.id}/${t.videoId}.mp4`, duration: `${t.duration}.042` }] };
  }
  return out;
}

export function errorFor(status: number, message: string): unknown {
  if (status === 429) return klingError(1302, 'The API request is too fast, please slow down the request frequency.');
  if (status === 401) return klingError(1000, 'Authentication failed');
  if (status === 404) return klingError(1203, 'The requested resource does not exist');
  if (status >= 500) return klingError(5000, `Server internal error: ${message}`);
  return klingError(1200, message);
}

/** A video's id is its task id sealed with the signing secret: CDN links outlive a restart. */
const videoIdOf = (state: SimState, taskId: string) => sealId(videoSecret(state), taskId, 32, '0123456789abcdef').slice(taskId.length);

function serveFile(ctx: SimContext): void {
  const [, taskId, videoId] = FILE.exec(ctx.url.pathname) ?? [];
  if (!taskId || videoIdOf(ctx.state, taskId) !== videoId) return sendJson(ctx.res, 404, { message: 'Not Found' });
  sendSampleVideo(ctx);
}

const DAY = 86_400_000;

/**
 * The simulated account's resource packs, fixed from the simulator's start: one in effect that each
 * video task created draws on (one unit per second), one used up, one expired, one bought long
 * ago (outside a year's window).
 */
function accountPacks(state: SimState) {
  const born = partState(state, 'kling.account', () => ({ at: Date.now() })).at;
  const used = [...part(state).tasks.values()].reduce((sum, t) => sum + t.duration, 0);
  const pack = (name: string, id: string, total: number, remaining: number, boughtDaysAgo: number, days: number, status: string) => ({
    resource_pack_name: name,
    resource_pack_id: id,
    resource_pack_type: 'decreasing_total',
    total_quantity: total,
    remaining_quantity: remaining,
    purchase_time: born - boughtDaysAgo * DAY,
    effective_time: born - boughtDaysAgo * DAY,
    invalid_time: born + (days - boughtDaysAgo) * DAY,
    status,
  });
  return [
    pack('Video Generation - 10,000 entries', '509f3fd3d4ab4a3f9eec5db27aa44f27', 10000, Math.max(0, 9400 - used), 30, 365, 'online'),
    pack('Video Generation - 1,000 entries', '6c1e0a8b3d2f4e5a9b7c8d9e0f1a2b3c', 1000, 0, 90, 365, 'runOut'),
    pack('Video Generation - 200 entries', '7d2f1b9c4e3a5f6b0c8d9e0f1a2b3c4d', 200, 118, 200, 30, 'expired'),
    pack('Video Generation - 500 entries', '8e3a2c0d5f4b6a7c1d9e0f1a2b3c4d5e', 500, 500, 500, 1000, 'online'),
  ];
}

export function klingVideoRoutes(): SimRoute[] {
  return [
    {
      name: 'kling.video.create',
      method: 'POST',
      pattern: /^\/v1\/videos\/(text2video|image2video)$/,
      auth: true,
      authenticate,
      errorBody: errorFor,
      handle(ctx) {
        const kind = ctx.params[0] as Kind;
        const parsed = parseCreate(ctx, kind);
        if (!parsed) return;
        const p = part(ctx.state);
        const id = newId(p.tasks, 18);
        const t: KlingTask = { id, videoId: videoIdOf(ctx.state, id), ...parsed };
        p.tasks.set(id, t);
        const data = taskData(ctx.state, t, t.createdMs);
        delete data.task_status_msg;
        sendJson(ctx.res, 200, { code: 0, message: 'SUCCEED', request_id: requestId(), data });
        // Kling POSTs the task's data, as a query answers it, to callback_url when its status changes.
        if (/^https?:\/\//.test(t.callbackUrl)) {
          scheduleCallbacks(ctx.state, 'kling.video.callback', t.callbackUrl, phaseChangesAt(t.createdMs, ctx.state.options.videoSeconds * 1000), (now) => {
            const body = taskData(ctx.state, t, now);
            return { status: String(body.task_status), body };
          });
        }
      },
    },
    {
      name: 'kling.video.get',
      method: 'GET',
      pattern: /^\/v1\/videos\/(text2video|image2video)\/([0-9]+)$/,
      auth: true,
      authenticate,
      errorBody: errorFor,
      handle(ctx) {
        const t = part(ctx.state).tasks.get(ctx.params[1]);
        // A task is read under the path it was created at, as Kling does.
        if (!t || t.kind !== ctx.params[0]) return sendJson(ctx.res, 404, klingError(1203, 'The requested task does not exist'));
        sendJson(ctx.res, 200, { code: 0, message: 'SUCCEED', request_id: requestId(), data: taskData(ctx.state, t, Date.now()) });
      },
    },
    {
      // GET /account/costs?start_time&end_time (Unix ms): the resource packs bought in the window.
      name: 'kling.account.costs',
      method: 'GET',
      pattern: /^\/account\/costs$/,
      auth: true,
      authenticate,
      errorBody: errorFor,
      handle(ctx) {
        const q = ctx.url.searchParams;
        const ms = (name: string) => {
          const v = q.get(name);
          return v !== null && /^\d{1,15}$/.test(v) ? Number(v) : undefined;
        };
        const start = ms('start_time');
        const end = ms('end_time');
        if (start === undefined || end === undefined) return void invalid(ctx, 'start_time and end_time are required: Unix timestamps in milliseconds');
        if (start > end) return void invalid(ctx, 'start_time must not be after end_time');
        const name = q.get('resource_pack_name');
        const packs = accountPacks(ctx.state).filter((p) => p.purchase_time >= start && p.purchase_time <= end && (name === null || p.resource_pack_name === name));
        sendJson(ctx.res, 200, { code: 0, message: 'SUCCEED', request_id: requestId(), data: { code: 0, msg: 'SUCCEED', resource_pack_subscribe_infos: packs } });
      },
    },
    { name: 'kling.video.file', method: 'GET', pattern: FILE, auth: false, handle: serveFile },
    { name: 'kling.video.file', method: 'HEAD', pattern: FILE, auth: false, handle: serveFile },
  ];
}

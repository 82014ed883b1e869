import { randomBytes } from 'node:crypto';
import { HAILUO_1080P_DURATION, HAILUO_FRAME, HAILUO_MODELS } from '../providers/minimax/wire.js';
import { sendJson, readJson, type SimContext, type SimRoute, type SimState } from './router.js';
import { sampleVideo } from './mp4.js';
import { newId, openId, ossSignedUrl, outcomeOf, partState, phaseAt, phaseChangesAt, scheduleCallbacks, sealId, serveSignedVideo, type SimOutcome, taskMap, videoSecret } from './video-common.js';

// The simulator's MiniMax Hailuo part, in MiniMax's wire format:
//   POST /v1/video_generation                  → {task_id, base_resp:{status_code:0, status_msg:"success"}}
//   GET  /v1/query/video_generation?task_id=   → {task_id, status, file_id, video_width, video_height, base_resp}
//   GET  /v1/files/retrieve?file_id=           → {file:{file_id, bytes, created_at, filename, purpose, download_url}, base_resp}
// Errors travel in `base_resp.status_code` with HTTP 200, as MiniMax answers them (injected faults
// keep their HTTP status). download_url is an OSS-style signed link that needs no key and lives
// about 9 hours. Outcome markers in the prompt are those of video-common.ts: [moderation] fails
// with 1027 (output sensitive); MiniMax has no cancelled or expired state, so those end `Fail`.

/** Lifetime of a download_url, seconds (capped by the simulator's URL lifetime). */
const DOWNLOAD_TTL_S = 9 * 3600;
const FILE = /^\/__sim\/minimax\/files\/([0-9]+)\.mp4$/;

interface HailuoTask {
  id: string;
  model: string;
  prompt: string;
  duration: number;
  resolution: string;
  createdMs: number;
  outcome: SimOutcome;
  fileId: string;
  /** Where to POST status changes ('' = nowhere). */
  callbackUrl: string;
}

interface HailuoPart {
  tasks: Map<string, HailuoTask>;
}

const part = (state: SimState): HailuoPart => partState(state, 'minimax.video', () => ({ tasks: taskMap(state, 'minimax.video') }));
/** A file id is the task id sealed with the signing secret (digits only), so files outlive a restart. */
const fileIdOf = (state: SimState, taskId: string) => sealId(videoSecret(state), taskId, 4, '0123456789');
const taskOfFile = (state: SimState, fileId: string) => openId(videoSecret(state), fileId, 4, '0123456789');

export const baseResp = (status_code: number, status_msg: string) => ({ base_resp: { status_code, status_msg } });

function refuse(ctx: SimContext, code: number, message: string): undefined {
  sendJson(ctx.res, 200, baseResp(code, message));
  return undefined;
}

function parseCreate(ctx: SimContext): Omit<HailuoTask, 'id' | 'fileId'> | undefined {
  const body = readJson(ctx, (m) => baseResp(2013, `invalid params, ${m}`));
  if (!body) return undefined;
  const model = typeof body.model === 'string' ? body.model : '';
  const spec = HAILUO_MODELS[model];
  if (!spec) return refuse(ctx, 2013, `invalid params, model must be one of ${Object.keys(HAILUO_MODELS).join(', ')}`);
  const prompt = body.prompt ?? '';
  if (typeof prompt !== 'string' || prompt.length > 2000) return refuse(ctx, 2013, 'invalid params, prompt must be a string of at most 2000 characters');
  const isImage = (v: unknown) => typeof v === 'string' && /^(https?:\/\/|data:image\/(png|jpeg|jpg|webp);base64,)/.test(v);
  for (const k of ['first_frame_image', 'last_frame_image']) if (body[k] !== undefined && !isImage(body[k])) return refuse(ctx, 2013, `invalid params, ${k} must be a URL or a data:image/…;base64 string`);
  const mode = body.subject_reference !== undefined ? 'subject' : body.last_frame_image !== undefined ? 'first_last_frame' : body.first_frame_image !== undefined ? 'first_frame' : 'text';
  if (mode === 'first_last_frame' && body.first_frame_image === undefined) return refuse(ctx, 2013, 'invalid params, last_frame_image needs first_frame_image');
  if (!spec.modes.includes(mode)) return refuse(ctx, 2013, `invalid params, ${model} does not support ${mode === 'text' ? 'text-to-video (first_frame_image is required)' : mode}`);
  if (mode === 'text' && !prompt) return refuse(ctx, 2013, 'invalid params, prompt is required');
  const duration = body.duration ?? 6;
  if (typeof duration !== 'number' || !spec.durations.includes(duration)) return refuse(ctx, 2013, `invalid params, duration must be one of ${spec.durations.join(', ')} for ${model}`);
  const resolution = body.resolution ?? spec.defaultResolution;
  if (typeof resolution !== 'string' || !spec.resolutions.includes(resolution)) return refuse(ctx, 2013, `invalid params, resolution must be one of ${spec.resolutions.join(', ')} for ${model}`);
  if (resolution === '512P' && mode === 'text') return refuse(ctx, 2013, 'invalid params, 512P is only available for image-to-video');
  if (resolution === '1080P' && duration !== HAILUO_1080P_DURATION) return refuse(ctx, 2013, 'invalid params, 1080P supports 6 s only');
  for (const k of ['prompt_optimizer', 'fast_pretreatment', 'aigc_watermark']) if (body[k] !== undefined && typeof body[k] !== 'boolean') return refuse(ctx, 2013, `invalid params, ${k} must be a boolean`);
  const callbackUrl = body.callback_url ?? '';
  if (typeof callbackUrl !== 'string' || (callbackUrl && !/^https?:\/\//.test(callbackUrl))) return refuse(ctx, 2013, 'invalid params, callback_url must be an http(s) URL');
  return { model, prompt, duration, resolution, createdMs: Date.now(), outcome: outcomeOf(prompt), callbackUrl };
}

/** POSTs a challenge to a callback URL; true when the answer echoes it (within 3 s, as MiniMax asks). */
async function answersChallenge(url: string): Promise<boolean> {
  const challenge = randomBytes(12).toString('hex');
  try {
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ challenge }), signal: AbortSignal.timeout(3000) });
    const answer = (await res.json()) as { challenge?: unknown };
    return res.ok && answer.challenge === challenge;
  } catch {
    return false;
  }
}

/** The answer of GET /v1/query/video_generation. */
function queryObject(state: SimState, t: HailuoTask, now: number): Record<string, unknown> {
  const totalMs = state.options.videoSeconds * 1000;
  const { phase } = phaseAt(t.createdMs, t.outcome, totalMs, now);
  if (phase === 'queued') {
    // Preparing for the first half of the queue time, then Queueing.
    const status = now < t.createdMs + totalMs * 0.1 ? 'Preparing' : 'Queueing';
    return { task_id: t.id, status, file_id: '', ...baseResp(0, 'success') };
  }
  if (phase === 'running') return { task_id: t.id, status: 'Processing', file_id: '', ...baseResp(0, 'success') };
  if (t.outcome === 'moderated') return { task_id: t.id, status: 'Fail', file_id: '', ...baseResp(1027, 'output video sensitive') };
  if (t.outcome !== 'succeeded') return { task_id: t.id, status: 'Fail', file_id: '', ...baseResp(1000, 'unknown error') };
  const [w, h] = HAILUO_FRAME[t.resolution] ?? [1280, 720];
  return { task_id: t.id, status: 'Success', file_id: t.fileId, video_width: w, video_height: h, ...baseResp(0, 'success') };
}

export function errorFor(status: number, message: string): unknown {
  if (status === 429) return baseResp(1002, 'rate limit exceeded');
  if (status === 401) return baseResp(1004, 'login fail');
  if (status >= 500) return baseResp(1013, `internal service error: ${message}`);
  return baseResp(2013, `invalid params, ${message}`);
}

export function authenticate(ctx: SimContext): boolean {
  if (/^Bearer \S+$/.test(String(ctx.req.headers.authorization ?? ''))) return true;
  sendJson(ctx.res, 200, baseResp(1004, "login fail: Please carry the API secret key in the 'Authorization' field of the request header"));
  return false;
}

const serveFile = (ctx: SimContext) => serveSignedVideo(ctx, videoSecret(ctx.state), FILE, (id) => taskOfFile(ctx.state, id) !== undefined);

export function hailuoVideoRoutes(): SimRoute[] {
  return [
    {
      name: 'minimax.video.create',
      method: 'POST',
      pattern: /^\/v1\/video_generation$/,
      auth: true,
      authenticate,
      errorBody: errorFor,
      async handle(ctx) {
        const parsed = parseCreate(ctx);
        if (!parsed) return;
        // Like MiniMax, a callback URL must first echo a challenge, or the task is refused.
        if (parsed.callbackUrl && !(await answersChallenge(parsed.callbackUrl))) return void refuse(ctx, 2013, 'invalid params, callback_url did not echo the challenge');
        const p = part(ctx.state);
        const id = newId(p.tasks, 15);
        const task: HailuoTask = { id, fileId: fileIdOf(ctx.state, id), ...parsed, createdMs: Date.now() };
        p.tasks.set(id, task);
        sendJson(ctx.res, 200, { task_id: id, ...baseResp(0, 'success') });
        if (task.callbackUrl) {
          scheduleCallbacks(ctx.state, 'minimax.video.callback', task.callbackUrl, phaseChangesAt(task.createdMs, ctx.state.options.videoSeconds * 1000), (now) => {
            const body = queryObject(ctx.state, task, now);
            return { status: String(body.status), body };
          });
        }
      },
    },
    {
      name: 'minimax.video.get',
      method: 'GET',
      pattern: /^\/v1\/query\/video_generation$/,
      auth: true,
      authenticate,
      errorBody: errorFor,
      handle(ctx) {
        const id = ctx.url.searchParams.get('task_id') ?? '';
        const t = part(ctx.state).tasks.get(id);
        if (!t) return void refuse(ctx, 2013, 'invalid params, task_id not found');
        sendJson(ctx.res, 200, queryObject(ctx.state, t, Date.now()));
      },
    },
    {
      name: 'minimax.video.retrieve',
      method: 'GET',
      pattern: /^\/v1\/files\/retrieve$/,
      auth: true,
      authenticate,
      errorBody: errorFor,
      handle(ctx) {
        const fileId = ctx.url.searchParams.get('file_id') ?? '';
        const taskId = taskOfFile(ctx.state, fileId);
        const t = taskId ? part(ctx.state).tasks.get(taskId) : undefined;
        const now = Date.now();
        // A task forgotten by a restart still has its file; a known one only once it succeeded.
        if (!taskId || (t && queryObject(ctx.state, t, now).status !== 'Success')) return void refuse(ctx, 2013, 'invalid params, file_id not found');
        const createdMs = t ? t.createdMs + ctx.state.options.videoSeconds * 1000 : now;
        const ttl = Math.min(DOWNLOAD_TTL_S, ctx.state.options.urlTtlS);
        sendJson(ctx.res, 200, {
          file: {
            file_id: Number(fileId),
            bytes: sampleVideo().length,
            created_at: Math.floor(createdMs / 1000),
            filename: 'output_aigc.mp4',
            purpose: 'video_generation',
            download_url: ossSignedUrl(ctx.state, videoSecret(ctx.state), `/__sim/minimax/files/${fileId}.mp4`, ttl, now),
          },
          ...baseResp(0, 'success'),
        });
      },
    },
    { name: 'minimax.video.file', method: 'GET', pattern: FILE, auth: false, handle: serveFile },
    { name: 'minimax.video.file', method: 'HEAD', pattern: FILE, auth: false, handle: serveFile },
  ];
}

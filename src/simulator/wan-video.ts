import { WAN_MODELS, WAN_SIZES } from '../providers/dashscope/wire.js';
import { sendJson, readJson, type SimContext, type SimRoute, type SimState } from './router.js';
import { outcomeOf, ossSignedUrl, partState, phaseAt, serveSignedVideo, taskMap, uuid, videoSecret, type SimOutcome } from './video-common.js';
import { dashscopeAsync, dashscopeError, dashscopeAuthenticate as authenticate, dashscopeErrorFor as errorFor, dashscopeInvalid as invalid, dashscopeStamp as stamp } from './dashscope-common.js';
import { cancelWanImageTask, wanImageTask } from './wan-images.js';

// The simulator's Alibaba Wan part, in DashScope's wire format:
//   POST /api/v1/services/aigc/video-generation/video-synthesis  (text- and image-to-video)
//   POST /api/v1/services/aigc/image2video/video-synthesis       (first + last frame)
//        both need `X-DashScope-Async: enable` → {request_id, output:{task_id, task_status:"PENDING"}}
//   GET  /api/v1/tasks/{task_id}         → {request_id, output:{…, video_url}, usage}
//   POST /api/v1/tasks/{task_id}/cancel  → cancels a PENDING task
// video_url is an OSS-style signed link (`Expires` in Unix seconds). Outcome markers in the prompt
// are those of video-common.ts: [moderation] fails with DataInspectionFailed, [cancel] ends
// CANCELED, [expire] ends UNKNOWN (the task is gone), [fail] FAILED with an internal error.
// The task endpoints also answer the image tasks of wan-images.ts.

/** The resolution tier of a text-to-video `size`. */
const tierOfSize = (size: string) => Object.keys(WAN_SIZES).find((t) => Object.values(WAN_SIZES[t]).includes(size));

const FILE = /^\/__sim\/dashscope\/videos\/([0-9a-f-]+)\.mp4$/;

interface WanTask {
  id: string;
  model: string;
  prompt: string;
  resolution: string;
  duration: number;
  createdMs: number;
  outcome: SimOutcome;
  cancelledMs: number | null;
}

interface WanPart {
  tasks: Map<string, WanTask>;
}

const part = (state: SimState): WanPart => partState(state, 'dashscope.video', () => ({ tasks: taskMap(state, 'dashscope.video') }));

function parseCreate(ctx: SimContext, endpoint: 'video-generation' | 'image2video'): Omit<WanTask, 'id'> | undefined {
  if (!dashscopeAsync(ctx)) return undefined;
  const body = readJson(ctx, (m) => dashscopeError('InvalidParameter', m));
  if (!body) return undefined;
  const model = typeof body.model === 'string' ? body.model : '';
  const spec = WAN_MODELS[model];
  if (!spec) return invalid(ctx, `Model not exist.`, 'InvalidParameter');
  if ((endpoint === 'image2video') !== (spec.kind === 'kf2v')) return invalid(ctx, `Model ${model} is not supported by this endpoint.`);
  const input = (body.input ?? {}) as Record<string, unknown>;
  const params = (body.parameters ?? {}) as Record<string, unknown>;
  if (typeof input !== 'object' || typeof params !== 'object') return invalid(ctx, 'input and parameters must be objects.');
  const prompt = input.prompt ?? '';
  if (typeof prompt !== 'string' || prompt.length > 1500) return invalid(ctx, 'input.prompt must be a string of at most 1500 characters.');
  const isUrl = (v: unknown) => typeof v === 'string' && /^(https?:\/\/|data:image\/|oss:\/\/)/.test(v);
  let resolution: string;
  if (spec.kind === 't2v') {
    if (!prompt) return invalid(ctx, 'input.prompt is required.', 'MissingParameter');
    if (input.img_url !== undefined || params.resolution !== undefined) return invalid(ctx, `Model ${model} takes no image and is sized by parameters.size.`);
    const size = params.size ?? WAN_SIZES[spec.defaultResolution]['16:9'];
    const tier = typeof size === 'string' ? tierOfSize(size) : undefined;
    if (!tier || !spec.resolutions.includes(tier)) return invalid(ctx, `parameters.size must be one of ${spec.resolutions.flatMap((r) => Object.values(WAN_SIZES[r])).join(', ')} for ${model}.`);
    resolution = tier;
  } else {
    if (params.size !== undefined) return invalid(ctx, `Model ${model} is sized by parameters.resolution.`);
    const r = params.resolution ?? spec.defaultResolution;
    if (typeof r !== 'string' || !spec.resolutions.includes(r)) return invalid(ctx, `parameters.resolution must be one of ${spec.resolutions.join(', ')} for ${model}.`);
    resolution = r;
    if (spec.kind === 'i2v' && !isUrl(input.img_url)) return invalid(ctx, 'input.img_url is required.', 'MissingParameter');
    if (spec.kind === 'kf2v') {
      if (!isUrl(input.first_frame_url)) return invalid(ctx, 'input.first_frame_url is required.', 'MissingParameter');
      if (input.last_frame_url !== undefined && !isUrl(input.last_frame_url)) return invalid(ctx, 'input.last_frame_url must be a URL.');
    }
  }
  const duration = params.duration ?? 5;
  if (typeof duration !== 'number' || !spec.durations.includes(duration)) return invalid(ctx, `parameters.duration must be one of ${spec.durations.join(', ')} for ${model}.`);
  if (params.seed !== undefined && (typeof params.seed !== 'number' || !Number.isInteger(params.seed) || params.seed < 0 || params.seed > 2147483647)) return invalid(ctx, 'parameters.seed must be an integer in [0, 2147483647].');
  for (const k of ['prompt_extend', 'watermark', 'audio']) if (params[k] !== undefined && typeof params[k] !== 'boolean') return invalid(ctx, `parameters.${k} must be a boolean.`);
  return { model, prompt, resolution, duration, createdMs: Date.now(), outcome: outcomeOf(prompt), cancelledMs: null };
}

/** The task exactly as GET /api/v1/tasks/{id} answers it. */
function taskObject(state: SimState, t: WanTask, now: number): Record<string, unknown> {
  const totalMs = state.options.videoSeconds * 1000;
  const { phase, since } = phaseAt(t.createdMs, t.outcome, totalMs, now, t.cancelledMs);
  const output: Record<string, unknown> = { task_id: t.id, task_status: 'PENDING', submit_time: stamp(t.createdMs) };
  if (phase === 'queued') return { request_id: uuid(), output };
  if (phase === 'cancelled') return { request_id: uuid(), output: { ...output, task_status: 'CANCELED', end_time: stamp(since) } };
  output.scheduled_time = stamp(t.createdMs + Math.round(totalMs * 0.2));
  if (phase === 'running') return { request_id: uuid(), output: { ...output, task_status: 'RUNNING' } };
  if (t.outcome === 'expired') return { request_id: uuid(), output: { task_id: t.id, task_status: 'UNKNOWN' } };
  output.end_time = stamp(since);
  if (t.outcome === 'failed') return { request_id: uuid(), output: { ...output, task_status: 'FAILED', code: 'InternalError.Algo', message: 'An internal error occurred during video generation.' } };
  if (t.outcome === 'moderated') return { request_id: uuid(), output: { ...output, task_status: 'FAILED', code: 'DataInspectionFailed', message: 'Output data may contain inappropriate content.' } };
  const url = ossSignedUrl(state, videoSecret(state), `/__sim/dashscope/videos/${t.id}.mp4`, state.options.urlTtlS, now);
  return {
    request_id: uuid(),
    output: { ...output, task_status: 'SUCCEEDED', video_url: url, orig_prompt: t.prompt },
    usage: { video_duration: t.duration, video_count: 1, SR: Number(t.resolution.replace('P', '')) },
  };
}

// The signature proves the simulator minted the link, so it is served even after a restart.
const serveFile = (ctx: SimContext) => serveSignedVideo(ctx, videoSecret(ctx.state), FILE, () => true);

function createRoute(name: string, path: RegExp, endpoint: 'video-generation' | 'image2video'): SimRoute {
  return {
    name,
    method: 'POST',
    pattern: path,
    auth: true,
    authenticate,
    errorBody: errorFor,
    handle(ctx) {
      const parsed = parseCreate(ctx, endpoint);
      if (!parsed) return;
      const p = part(ctx.state);
      const id = uuid();
      p.tasks.set(id, { id, ...parsed });
      sendJson(ctx.res, 200, { request_id: uuid(), output: { task_id: id, task_status: 'PENDING' } });
    },
  };
}

export function wanVideoRoutes(): SimRoute[] {
  return [
    createRoute('dashscope.video.create', /^\/api\/v1\/services\/aigc\/video-generation\/video-synthesis$/, 'video-generation'),
    createRoute('dashscope.video.create', /^\/api\/v1\/services\/aigc\/image2video\/video-synthesis$/, 'image2video'),
    {
      name: 'dashscope.video.get',
      method: 'GET',
      pattern: /^\/api\/v1\/tasks\/([^/]+)$/,
      auth: true,
      authenticate,
      errorBody: errorFor,
      handle(ctx) {
        const id = decodeURIComponent(ctx.params[0]);
        const t = part(ctx.state).tasks.get(id);
        // One task endpoint serves every kind of task: an image task is the images part's.
        if (!t) {
          const image = wanImageTask(ctx, id);
          if (image) return sendJson(ctx.res, 200, image);
        }
        // DashScope answers an id it does not know (or no longer keeps) with status UNKNOWN.
        if (!t) return sendJson(ctx.res, 200, { request_id: uuid(), output: { task_id: id, task_status: 'UNKNOWN' } });
        sendJson(ctx.res, 200, taskObject(ctx.state, t, Date.now()));
      },
    },
    {
      name: 'dashscope.video.cancel',
      method: 'POST',
      pattern: /^\/api\/v1\/tasks\/([^/]+)\/cancel$/,
      auth: true,
      authenticate,
      errorBody: errorFor,
      handle(ctx) {
        const t = part(ctx.state).tasks.get(decodeURIComponent(ctx.params[0]));
        const now = Date.now();
        const phase = t ? phaseAt(t.createdMs, t.outcome, ctx.state.options.videoSeconds * 1000, now, t.cancelledMs).phase : undefined;
        if (!t) return cancelWanImageTask(ctx, decodeURIComponent(ctx.params[0]));
        if (phase !== 'queued') return invalid(ctx, 'Failed to cancel the task, please confirm if the task is in PENDING status.', 'UnsupportedOperation');
        t.cancelledMs = now;
        // Set again, so the change is saved.
        part(ctx.state).tasks.set(t.id, t);
        sendJson(ctx.res, 200, { request_id: uuid() });
      },
    },
    { name: 'dashscope.video.file', method: 'GET', pattern: FILE, auth: false, handle: serveFile },
    { name: 'dashscope.video.file', method: 'HEAD', pattern: FILE, auth: false, handle: serveFile },
  ];
}

import { sendJson, readJson, type SimContext, type SimRoute, type SimState } from './router.js';
import { newId, outcomeOf, partState, phaseAt, sendSampleVideo, taskMap, uuid, type SimOutcome } from './video-common.js';

// The simulator's Zhipu CogVideoX part, in the Z.ai / BigModel open platform's wire format:
//   POST /api/paas/v4/videos/generations  {model, prompt?, image_url?, quality?, with_audio?,
//        watermark_enabled?, size?, fps? 30|60, duration? 5|10, request_id?, user_id?}
//        → {model, id, request_id, task_status:"PROCESSING"}
//   GET  /api/paas/v4/async-result/{id}   → {model, task_status: PROCESSING|SUCCESS|FAIL,
//        video_result:[{url, cover_image_url}], request_id}
// Errors are {error:{code, message}}: 1000–1004 authentication (401), 1211 unknown model, 1214
// invalid parameter, 1301 unsafe content (400), 1302 rate limit (429). image_url is one image
// (first frame) or two (first and last frame, speed mode only); a prompt of at most 512
// characters, an image_url, or both. Outcome markers in the prompt are those of video-common.ts:
// [moderation] is refused at once with 1301, [fail], [cancel] and [expire] end FAIL.

// cogvideox-3 on both platforms; the earlier CogVideoX models (text or one image) on BigModel.
const MODELS = ['cogvideox-3', 'cogvideox-2', 'cogvideox-flash'];
const SIZES = ['1280x720', '720x1280', '1024x1024', '1920x1080', '1080x1920', '2048x1080', '3840x2160'];
const FILE = /^\/__sim\/zhipu\/video\/([0-9]+)\.mp4$/;

interface ZhipuTask {
  id: string;
  model: string;
  requestId: string;
  createdMs: number;
  outcome: SimOutcome;
}

const part = (state: SimState) => partState(state, 'zhipu.video', () => ({ tasks: taskMap<ZhipuTask>(state, 'zhipu.video') }));

const zhipuError = (code: string, message: string) => ({ error: { code, message } });

function refuse(ctx: SimContext, message: string, code = '1214', status = 400): undefined {
  sendJson(ctx.res, status, zhipuError(code, message));
  return undefined;
}

const isImage = (v: unknown) => typeof v === 'string' && /^(https?:\/\/|data:image\/(png|jpeg|jpg);base64,|[A-Za-z0-9+/]{16,}={0,2}$)/.test(v);

function parseCreate(ctx: SimContext): Omit<ZhipuTask, 'id'> | undefined {
  const body = readJson(ctx, (m) => zhipuError('1214', m));
  if (!body) return undefined;
  const model = body.model;
  if (typeof model !== 'string' || !model) return refuse(ctx, 'model is required.');
  if (!MODELS.includes(model)) return refuse(ctx, `Model ${model} does not exist.`, '1211');
  const prompt = body.prompt ?? '';
  if (typeof prompt !== 'string' || prompt.length > 512) return refuse(ctx, 'prompt must be a string of at most 512 characters.');
  const images = body.image_url === undefined ? [] : Array.isArray(body.image_url) ? body.image_url : [body.image_url];
  if (!prompt && !images.length) return refuse(ctx, 'Give prompt, image_url, or both.');
  if (images.length > 2 || !images.every(isImage)) return refuse(ctx, 'image_url must be one image or a list of two (first and last frame), each a URL or base64 of a png or jpeg.');
  const quality = body.quality ?? 'speed';
  if (quality !== 'speed' && quality !== 'quality') return refuse(ctx, 'quality must be speed or quality.');
  if (images.length === 2 && model !== 'cogvideox-3') return refuse(ctx, `${model} takes one image; first and last frame needs cogvideox-3.`);
  if (images.length === 2 && quality !== 'speed') return refuse(ctx, 'First and last frame mode supports quality speed only.');
  if (body.size !== undefined && !SIZES.includes(String(body.size))) return refuse(ctx, `size must be one of ${SIZES.join(', ')}.`);
  if (body.fps !== undefined && body.fps !== 30 && body.fps !== 60) return refuse(ctx, 'fps must be 30 or 60.');
  if (body.duration !== undefined && body.duration !== 5 && body.duration !== 10) return refuse(ctx, 'duration must be 5 or 10.');
  for (const k of ['with_audio', 'watermark_enabled']) if (body[k] !== undefined && typeof body[k] !== 'boolean') return refuse(ctx, `${k} must be a boolean.`);
  const outcome = outcomeOf(prompt);
  if (outcome === 'moderated') return refuse(ctx, 'The input or generated content may contain unsafe or sensitive content.', '1301');
  const requestId = typeof body.request_id === 'string' && body.request_id ? body.request_id : uuid();
  return { model, requestId, createdMs: Date.now(), outcome };
}

/** The answer of GET /api/paas/v4/async-result/{id}. */
function resultObject(state: SimState, t: ZhipuTask, now: number): Record<string, unknown> {
  const { phase } = phaseAt(t.createdMs, t.outcome, state.options.videoSeconds * 1000, now);
  const base = { model: t.model, request_id: t.requestId };
  if (phase === 'queued' || phase === 'running') return { ...base, task_status: 'PROCESSING' };
  if (t.outcome !== 'succeeded') return { ...base, task_status: 'FAIL' };
  const url = `${state.baseUrl}/__sim/zhipu/video/${t.id}.mp4`;
  return { ...base, task_status: 'SUCCESS', video_result: [{ url, cover_image_url: url.replace(/\.mp4$/, '_cover.png') }] };
}

function errorFor(status: number, message: string): unknown {
  if (status === 429) return zhipuError('1302', 'Rate limit reached for requests.');
  if (status === 401) return zhipuError('1001', 'Authentication failed.');
  if (status >= 500) return zhipuError('500', `Internal error: ${message}`);
  return zhipuError('1214', message);
}

function authenticate(ctx: SimContext): boolean {
  if (/^Bearer \S+$/.test(String(ctx.req.headers.authorization ?? ''))) return true;
  sendJson(ctx.res, 401, zhipuError('1000', 'Authentication failed: the Authorization header is missing.'));
  return false;
}

function serveFile(ctx: SimContext): void {
  const t = part(ctx.state).tasks.get(FILE.exec(ctx.url.pathname)?.[1] ?? '');
  if (!t || resultObject(ctx.state, t, Date.now()).task_status !== 'SUCCESS') return sendJson(ctx.res, 404, zhipuError('404', 'Not found.'));
  sendSampleVideo(ctx);
}

export function zhipuVideoRoutes(): SimRoute[] {
  return [
    {
      name: 'zhipu.video.create',
      method: 'POST',
      pattern: /^\/api\/paas\/v4\/videos\/generations$/,
      auth: true,
      authenticate,
      errorBody: errorFor,
      handle(ctx) {
        const parsed = parseCreate(ctx);
        if (!parsed) return;
        const p = part(ctx.state);
        const id = newId(p.tasks, 19);
        p.tasks.set(id, { id, ...parsed });
        sendJson(ctx.res, 200, { model: parsed.model, id, request_id: parsed.requestId, task_status: 'PROCESSING' });
      },
    },
    {
      name: 'zhipu.video.get',
      method: 'GET',
      pattern: /^\/api\/paas\/v4\/async-result\/([^/]+)$/,
      auth: true,
      authenticate,
      errorBody: errorFor,
      handle(ctx) {
        const t = part(ctx.state).tasks.get(decodeURIComponent(ctx.params[0]));
        if (!t) return refuse(ctx, `Task ${ctx.params[0]} does not exist.`, '1214', 404);
        sendJson(ctx.res, 200, resultObject(ctx.state, t, Date.now()));
      },
    },
    { name: 'zhipu.video.file', method: 'GET', pattern: FILE, auth: false, handle: serveFile },
    { name: 'zhipu.video.file', method: 'HEAD', pattern: FILE, auth: false, handle: serveFile },
  ];
}

import { PIXVERSE_1080P_DURATION, PIXVERSE_IMAGE_TYPES, PIXVERSE_MODELS, PIXVERSE_RATIOS } from '../providers/pixverse/wire.js';
import { boundaryOf, parseMultipart } from './multipart.js';
import { readJson, sendJson, type SimContext, type SimRoute, type SimState } from './router.js';
import { newId, outcomeOf, partState, phaseAt, sealId, sendSampleVideo, taskMap, videoSecret, type SimOutcome } from './video-common.js';

// The simulator's Pixverse part, in Pixverse's wire format (docs.platform.pixverse.ai):
//   POST /openapi/v2/image/upload (multipart `image`) → {ErrCode:0, ErrMsg:"Success", Resp:{img_id, img_url}}
//   POST /openapi/v2/video/{text|img|transition}/generate → {ErrCode:0, ErrMsg:"Success", Resp:{video_id}}
//   GET  /openapi/v2/video/result/{id} → {ErrCode, ErrMsg, Resp:{id, status, url, outputWidth, outputHeight, …}}
// Every call needs `API-KEY` (10005 with HTTP 401 when missing or revoked: a key holding "revoked")
// and an `Ai-trace-id`; a create repeated with the same trace id answers the same video (Pixverse
// treats the trace id as the request's identity). The image and transition creates take ids of
// images uploaded first. Statuses: 5 generating, 1 done, 7 refused by moderation, 8 failed.
// Outcome markers: [moderation] → 7; [fail], [cancel], [expire] → 8 (Pixverse has no other end).

const FILE = /^\/__sim\/pixverse\/([0-9]+)\/([0-9a-f]{16})\.mp4$/;

interface PixverseTask {
  id: string;
  model: string;
  prompt: string;
  duration: number;
  quality: string;
  ratio: string;
  createdMs: number;
  outcome: SimOutcome;
}

interface PixversePart {
  tasks: Map<string, PixverseTask>;
  images: Map<string, { type: string; bytes: number }>;
  /** Video id of each create's trace id (newest 1000). */
  traces: Map<string, string>;
}

const part = (state: SimState): PixversePart => partState(state, 'pixverse.video', () => ({ tasks: taskMap<PixverseTask>(state, 'pixverse.video'), images: new Map(), traces: new Map() }));

const answer = (ctx: SimContext, resp: unknown, status = 200) => sendJson(ctx.res, status, { ErrCode: 0, ErrMsg: 'Success', Resp: resp });
const refuse = (ctx: SimContext, code: number, message: string, status = 200): undefined => {
  sendJson(ctx.res, status, { ErrCode: code, ErrMsg: message });
  return undefined;
};

function authenticate(ctx: SimContext): boolean {
  const key = String(ctx.req.headers['api-key'] ?? '');
  if (!key || key.includes('revoked')) refuse(ctx, 10005, 'API key error', 401);
  else if (!ctx.req.headers['ai-trace-id']) refuse(ctx, 400017, 'Ai-trace-id is required');
  else return true;
  return false;
}

/** The image type of a file by its first bytes. */
function sniff(b: Buffer): string | undefined {
  if (b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
  if (b[0] === 0xff && b[1] === 0xd8) return 'image/jpeg';
  if (b.subarray(0, 4).toString('latin1') === 'RIFF' && b.subarray(8, 12).toString('latin1') === 'WEBP') return 'image/webp';
  return undefined;
}

type Kind = 'text' | 'img' | 'transition';

function parseCreate(ctx: SimContext, kind: Kind): Omit<PixverseTask, 'id'> | undefined {
  const body = readJson(ctx, () => ({ ErrCode: 400017, ErrMsg: 'Invalid binding request' }));
  if (!body) return undefined;
  const model = typeof body.model === 'string' ? body.model : '';
  const spec = PIXVERSE_MODELS[model];
  if (!spec) return refuse(ctx, 400017, `Invalid parameter: model must be one of ${Object.keys(PIXVERSE_MODELS).join(', ')}`);
  const prompt = body.prompt ?? '';
  if (typeof prompt !== 'string' || prompt.length > 2048) return refuse(ctx, 400017, 'Invalid parameter: prompt must be at most 2048 characters');
  if (kind === 'text' && !prompt) return refuse(ctx, 400017, 'Invalid parameter: prompt is required');
  const images = part(ctx.state).images;
  const known = (v: unknown) => (typeof v === 'number' || typeof v === 'string') && images.has(String(v));
  if (kind === 'img' && !known(body.img_id)) return refuse(ctx, 400017, 'Invalid parameter: img_id is not an uploaded image');
  if (kind === 'transition' && !(known(body.first_frame_img) && known(body.last_frame_img))) return refuse(ctx, 400017, 'Invalid parameter: first_frame_img and last_frame_img must be uploaded images');
  if (kind !== 'text' && body.aspect_ratio !== undefined) return refuse(ctx, 400017, 'Invalid parameter: aspect_ratio applies to text-to-video only');
  const ratio = body.aspect_ratio ?? '16:9';
  if (typeof ratio !== 'string' || !PIXVERSE_RATIOS.includes(ratio)) return refuse(ctx, 400017, `Invalid parameter: aspect_ratio must be one of ${PIXVERSE_RATIOS.join(', ')}`);
  const quality = body.quality;
  if (typeof quality !== 'string' || !spec.qualities.includes(quality)) return refuse(ctx, 400017, `Invalid parameter: quality must be one of ${spec.qualities.join(', ')}`);
  const duration = body.duration;
  if (typeof duration !== 'number' || !spec.durations.includes(duration)) return refuse(ctx, 400017, `Invalid parameter: duration must be one of ${spec.durations.join(', ')}`);
  if (quality === '1080p' && duration !== PIXVERSE_1080P_DURATION) return refuse(ctx, 400017, "Invalid parameter: 1080p doesn't support 8");
  if (body.seed !== undefined && (typeof body.seed !== 'number' || !Number.isInteger(body.seed) || body.seed < 0 || body.seed > 2147483647)) return refuse(ctx, 400017, 'Invalid parameter: seed must be an integer in [0, 2147483647]');
  if (body.motion_mode !== undefined && !['normal', 'fast'].includes(String(body.motion_mode))) return refuse(ctx, 400017, 'Invalid parameter: motion_mode must be normal or fast');
  return { model, prompt, duration, quality, ratio, createdMs: Date.now(), outcome: outcomeOf(prompt) };
}

const SIZES: Record<string, number> = { '360p': 360, '540p': 540, '720p': 720, '1080p': 1080 };
const videoKeyOf = (state: SimState, id: string) => sealId(videoSecret(state), id, 16, '0123456789abcdef').slice(id.length);

/** Resp of GET /openapi/v2/video/result/{id}. */
function result(state: SimState, t: PixverseTask, now: number): Record<string, unknown> {
  const { phase, since } = phaseAt(t.createdMs, t.outcome, state.options.videoSeconds * 1000, now);
  const stamp = (ms: number) => new Date(ms).toISOString().replace('T', ' ').slice(0, 19);
  const base = { id: Number(t.id), prompt: t.prompt, create_time: stamp(t.createdMs), modify_time: stamp(phase === 'done' ? since : t.createdMs), url: '', outputWidth: 0, outputHeight: 0 };
  if (phase === 'queued' || phase === 'running') return { ...base, status: 5 };
  if (t.outcome === 'moderated') return { ...base, status: 7 };
  if (t.outcome !== 'succeeded') return { ...base, status: 8 };
  const [rw, rh] = t.ratio.split(':').map(Number);
  const short = SIZES[t.quality] ?? 540;
  const [w, h] = rw >= rh ? [Math.round((short * rw) / rh), short] : [short, Math.round((short * rh) / rw)];
  return { ...base, status: 1, url: `${state.baseUrl}/__sim/pixverse/${t.id}/${videoKeyOf(state, t.id)}.mp4`, outputWidth: w, outputHeight: h, size: 0 };
}

function errorFor(status: number, message: string): unknown {
  if (status === 401) return { ErrCode: 10005, ErrMsg: 'API key error' };
  if (status === 429) return { ErrCode: 500063, ErrMsg: 'Reached the limit for concurrent generations.' };
  return { ErrCode: status >= 500 ? 500000 : 400017, ErrMsg: message };
}

function serveFile(ctx: SimContext): void {
  const [, id, key] = FILE.exec(ctx.url.pathname) ?? [];
  if (!id || videoKeyOf(ctx.state, id) !== key) return sendJson(ctx.res, 404, { ErrCode: 404, ErrMsg: 'Not Found' });
  sendSampleVideo(ctx);
}

function createRoute(kind: Kind): SimRoute {
  return {
    name: 'pixverse.video.create',
    method: 'POST',
    pattern: new RegExp(`^/openapi/v2/video/${kind}/generate$`),
    auth: true,
    authenticate,
    errorBody: errorFor,
    handle(ctx) {
      const p = part(ctx.state);
      const trace = String(ctx.req.headers['ai-trace-id']);
      const seen = p.traces.get(trace);
      if (seen) return answer(ctx, { video_id: Number(seen) });
      const parsed = parseCreate(ctx, kind);
      if (!parsed) return;
      const t: PixverseTask = { id: newId(p.tasks, 12), ...parsed };
      p.tasks.set(t.id, t);
      p.traces.set(trace, t.id);
      if (p.traces.size > 1000) p.traces.delete(p.traces.keys().next().value!);
      answer(ctx, { video_id: Number(t.id) });
    },
  };
}

export function pixverseVideoRoutes(): SimRoute[] {
  return [
    {
      name: 'pixverse.image.upload',
      method: 'POST',
      pattern: /^\/openapi\/v2\/image\/upload$/,
      auth: true,
      authenticate,
      errorBody: errorFor,
      handle(ctx) {
        const boundary = boundaryOf(ctx.req.headers['content-type']);
        const parts = boundary ? parseMultipart(ctx.body, boundary) : null;
        const file = parts?.find((f) => f.name === 'image' && f.filename !== undefined);
        if (!file) return void refuse(ctx, 400017, 'Invalid binding request: image file is required');
        const type = sniff(file.data);
        if (!type || !PIXVERSE_IMAGE_TYPES.includes(type)) return void refuse(ctx, 400018, 'Unsupported image format');
        const p = part(ctx.state);
        const id = newId(p.images, 9);
        p.images.set(id, { type, bytes: file.data.length });
        answer(ctx, { img_id: Number(id), img_url: `${ctx.state.baseUrl}/__sim/pixverse/images/${id}` });
      },
    },
    createRoute('text'),
    createRoute('img'),
    createRoute('transition'),
    {
      name: 'pixverse.video.get',
      method: 'GET',
      pattern: /^\/openapi\/v2\/video\/result\/([0-9]+)$/,
      auth: true,
      authenticate,
      errorBody: errorFor,
      handle(ctx) {
        const t = part(ctx.state).tasks.get(ctx.params[0]);
        if (!t) return void refuse(ctx, 400017, 'Invalid parameter: video not found');
        answer(ctx, result(ctx.state, t, Date.now()));
      },
    },
    { name: 'pixverse.video.file', method: 'GET', pattern: FILE, auth: false, handle: serveFile },
    { name: 'pixverse.video.file', method: 'HEAD', pattern: FILE, auth: false, handle: serveFile },
  ];
}

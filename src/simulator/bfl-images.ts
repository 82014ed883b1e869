import { randomUUID } from 'node:crypto';
import { sendJson, readJson, type SimContext, type SimRoute } from './router.js';
import { crc32, seedOf } from './png.js';
import { sniffImageType } from '../http/image-type.js';
import { SIMULATOR_IMAGE_FILES } from '../providers/simulator/wire.js';
import { outcomeOf } from './video-common.js';
import { imageTaskMs } from './image-common.js';

// Black Forest Labs' FLUX API, from its public reference (docs.bfl.ai): POST /v1/{model} with the
// key in `x-key` answers {id, polling_url, cost, input_mp, output_mp}; GET the polling URL (also
// /v1/get_result?id=) answers {id, status, result, progress}, status one of Pending, Ready, Error,
// Request Moderated, Content Moderated, Task not found; a Ready result holds `sample`, a signed
// URL to the image. Validation errors are 422 {detail:[{loc, msg, type}]}.
// Prompt markers: [sim:sensitive] → Request Moderated at once (the prompt refused); the outcome
// markers of video-common.ts at the end of the run: [moderation] → Content Moderated (the output
// refused), [fail] → Error, [expire] → Task not found (the task forgotten), [stuck] → Pending forever.

const PART = 'bfl-images';
const SENSITIVE = '[sim:sensitive]';

interface Task {
  id: string;
  model: string;
  width: number;
  height: number;
  seed: number;
  created: number;
  outcome: 'ready' | 'refused' | 'moderated' | 'error' | 'forgotten' | 'stuck';
}

/** Models and how each takes its shape: width/height (FLUX 1.1 [pro], [dev]) or aspect_ratio (Kontext, Ultra). */
const MODELS: Record<string, { shape: 'dimensions' | 'ratio'; maxImages: number }> = {
  'flux-pro-1.1': { shape: 'dimensions', maxImages: 1 },
  'flux-dev': { shape: 'dimensions', maxImages: 1 },
  'flux-pro-1.1-ultra': { shape: 'ratio', maxImages: 1 },
  'flux-kontext-pro': { shape: 'ratio', maxImages: 4 },
  'flux-kontext-max': { shape: 'ratio', maxImages: 4 },
};

function tasks(ctx: SimContext): Map<string, Task> {
  let t = ctx.state.parts.get(PART) as Map<string, Task> | undefined;
  if (!t) ctx.state.parts.set(PART, (t = new Map()));
  return t;
}

const invalid = (ctx: SimContext, field: string, msg: string) => sendJson(ctx.res, 422, { detail: [{ loc: ['body', field], msg, type: 'value_error' }] });

/** A ratio "W:H" between 21:9 and 9:21, rendered at about one megapixel in multiples of 32. */
function ratioSize(ratio: string): [number, number] | null {
  const m = /^(\d{1,2}):(\d{1,2})$/.exec(ratio);
  if (!m) return null;
  const [w, h] = [Number(m[1]), Number(m[2])];
  if (!w || !h || w / h > 21 / 9 + 1e-9 || h / w > 21 / 9 + 1e-9) return null;
  const scale = Math.sqrt(1024 * 1024 / (w * h));
  return [Math.round((w * scale) / 32) * 32, Math.round((h * scale) / 32) * 32];
}

function create(ctx: SimContext): void {
  const model = ctx.params[0];
  const spec = MODELS[model];
  if (!spec) return sendJson(ctx.res, 404, { detail: 'Not Found' });
  const body = readJson(ctx, (message) => ({ detail: message }));
  if (!body) return;
  if (typeof body.prompt !== 'string') return invalid(ctx, 'prompt', 'Field required');
  let size: [number, number] = [1024, 768];
  if (spec.shape === 'dimensions') {
    for (const f of ['width', 'height'] as const) {
      const v = body[f];
      if (v === undefined || v === null) continue;
      if (typeof v !== 'number' || !Number.isInteger(v) || v < 256 || v > 1440 || v % 32 !== 0) return invalid(ctx, f, 'Input should be a multiple of 32 from 256 to 1440');
    }
    size = [(body.width as number | undefined) ?? 1024, (body.height as number | undefined) ?? 768];
  } else {
    if (body.width !== undefined || body.height !== undefined) return invalid(ctx, 'width', `Extra inputs are not permitted on ${model}; use aspect_ratio`);
    const r = body.aspect_ratio === undefined || body.aspect_ratio === null ? [1024, 1024] as [number, number] : typeof body.aspect_ratio === 'string' ? ratioSize(body.aspect_ratio) : null;
    if (!r) return invalid(ctx, 'aspect_ratio', 'Aspect ratio must be between 21:9 and 9:21');
    size = r;
  }
  const inputs: Buffer[] = [];
  for (const f of ['input_image', 'input_image_2', 'input_image_3', 'input_image_4', 'image_prompt']) {
    const v = body[f];
    if (v === undefined || v === null) continue;
    if (f !== 'image_prompt' && spec.maxImages === 1) return invalid(ctx, f, `Extra inputs are not permitted on ${model}`);
    if (typeof v !== 'string') return invalid(ctx, f, 'Input should be a valid string');
    if (/^https?:\/\//.test(v)) continue;
    const bytes = Buffer.from(v, 'base64');
    if (!sniffImageType(bytes)) return invalid(ctx, f, 'Input should be a base64 encoded image or a URL');
    inputs.push(bytes);
  }
  if (body.seed !== undefined && body.seed !== null && !Number.isInteger(body.seed)) return invalid(ctx, 'seed', 'Input should be a valid integer');
  if (body.output_format !== undefined && body.output_format !== null && body.output_format !== 'png' && body.output_format !== 'jpeg') return invalid(ctx, 'output_format', "Input should be 'jpeg' or 'png'");
  const tol = body.safety_tolerance;
  if (tol !== undefined && (!Number.isInteger(tol) || (tol as number) < 0 || (tol as number) > 6)) return invalid(ctx, 'safety_tolerance', 'Input should be from 0 to 6');
  const seed = (seedOf(body.prompt) ^ (typeof body.seed === 'number' ? body.seed : 0) ^ crc32(...inputs)) >>> 0;
  const id = randomUUID();
  const outcome = body.prompt.includes(SENSITIVE) ? 'refused' : OUTCOMES[outcomeOf(body.prompt)];
  tasks(ctx).set(id, { id, model, width: size[0], height: size[1], seed, created: Date.now(), outcome });
  const mp = Math.round((size[0] * size[1]) / 1e4) / 100;
  sendJson(ctx.res, 200, { id, polling_url: `${ctx.state.baseUrl}/bfl/v1/get_result?id=${id}`, cost: 4, input_mp: 0, output_mp: mp });
}

/** How a task ends per outcome marker (BFL has no cancel: [cancel] ends like [fail]). */
const OUTCOMES: Record<ReturnType<typeof outcomeOf>, Task['outcome']> = {
  succeeded: 'ready',
  failed: 'error',
  cancelled: 'error',
  moderated: 'moderated',
  expired: 'forgotten',
  stuck: 'stuck',
};

function getResult(ctx: SimContext): void {
  const id = ctx.url.searchParams.get('id') ?? '';
  const t = tasks(ctx).get(id);
  if (!t) return sendJson(ctx.res, 200, { id, status: 'Task not found', result: null, progress: null });
  const ms = Date.now() - t.created;
  const run = imageTaskMs(ctx.state);
  if (t.outcome === 'refused') return sendJson(ctx.res, 200, { id, status: 'Request Moderated', result: null, progress: null, details: { 'Moderation Reasons': ['Derivative Works Filter'] } });
  if (ms < run || t.outcome === 'stuck') return sendJson(ctx.res, 200, { id, status: 'Pending', result: null, progress: Math.round((ms / run) * 100) / 100 });
  if (t.outcome === 'error') return sendJson(ctx.res, 200, { id, status: 'Error', result: null, progress: null, details: { error: 'Generation failed' } });
  if (t.outcome === 'moderated') return sendJson(ctx.res, 200, { id, status: 'Content Moderated', result: null, progress: null, details: { 'Moderation Reasons': ['Content Moderated'] } });
  if (t.outcome === 'forgotten') return sendJson(ctx.res, 200, { id, status: 'Task not found', result: null, progress: null });
  const file = `${t.width}x${t.height}-${t.seed.toString(16).padStart(8, '0')}`;
  sendJson(ctx.res, 200, { id, status: 'Ready', result: { sample: `${ctx.state.baseUrl}${SIMULATOR_IMAGE_FILES}${file}.png`, prompt: '', seed: t.seed, start_time: t.created / 1000, end_time: (t.created + run) / 1000, duration: run / 1000 }, progress: null });
}

/** The key goes in `x-key`; a missing or empty one is BFL's 403. */
function authenticate(ctx: SimContext): boolean {
  if (ctx.req.headers['x-key']) return true;
  sendJson(ctx.res, 403, { detail: 'Not authenticated - Invalid Authentication' });
  return false;
}

export function bflImageRoutes(): SimRoute[] {
  const errorBody = (_status: number, message: string) => ({ detail: message });
  return [
    { name: 'bfl.images.get', method: 'GET', pattern: /^\/bfl\/v1\/get_result$/, auth: true, authenticate, errorBody, handle: getResult },
    { name: 'bfl.images.create', method: 'POST', pattern: /^\/bfl\/v1\/([a-z0-9.-]+)$/, auth: true, authenticate, errorBody, handle: create },
  ];
}

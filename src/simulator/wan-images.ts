import { WAN_IMAGE_MODELS, QWEN_IMAGE_SIZES } from '../providers/dashscope/wire.js';
import { readJson, sendJson, type SimContext, type SimRoute } from './router.js';
import { dashscopeAsync, dashscopeAuthenticate, dashscopeError, dashscopeErrorFor, dashscopeInvalid as invalid, dashscopeStamp as stamp } from './dashscope-common.js';
import { dataUrlImage, drawPictures, imageInput, imageTaskMs } from './image-common.js';
import { crc32 } from './png.js';
import { fileUrl } from './images.js';
import { outcomeOf, partState, phaseAt, taskMap, uuid, type SimOutcome } from './video-common.js';

// The simulator's Wan and Qwen-Image text-to-image part, in DashScope's wire format (Alibaba
// Cloud Model Studio, "Wan text-to-image V2" and "Qwen-Image" API references):
//   POST /api/v1/services/aigc/text2image/image-synthesis   with `X-DashScope-Async: enable`
//        {model, input:{prompt, negative_prompt?}, parameters:{size:"W*H", n, seed, prompt_extend, watermark}}
//        → {request_id, output:{task_id, task_status:"PENDING"}}
//   GET  /api/v1/tasks/{task_id} (served by wan-video.ts's task route, which asks this part)
//        → {request_id, output:{task_status, results:[{url, orig_prompt, actual_prompt}], task_metrics}, usage:{image_count}}
//   POST /api/v1/services/aigc/image2image/image-synthesis  (Wan 2.5 image edit, also async)
//        {model, input:{prompt, images:[url | data:image/…;base64,…] (1–3), negative_prompt?}, parameters:{size?, n, seed, prompt_extend, watermark}}
// Outcome markers in the prompt (video-common.ts): [fail] ends FAILED with an internal error,
// [moderation] FAILED with DataInspectionFailed, [cancel] CANCELED, [expire] UNKNOWN.

interface ImageTask {
  id: string;
  model: string;
  prompt: string;
  width: number;
  height: number;
  n: number;
  seed: number;
  createdMs: number;
  outcome: SimOutcome;
  cancelledMs: number | null;
}

const part = (ctx: SimContext) => partState(ctx.state, 'dashscope.images', () => ({ tasks: taskMap<ImageTask>(ctx.state, 'dashscope.images') }));

/** The `size` "W*H" a model draws, or a message naming what it takes. */
function sizeOf(model: string, size: unknown): [number, number] | string {
  const spec = WAN_IMAGE_MODELS[model];
  const m = typeof size === 'string' ? /^(\d{2,5})\*(\d{2,5})$/.exec(size) : null;
  const [w, h] = m ? [Number(m[1]), Number(m[2])] : [0, 0];
  if (spec.sizing === 'table') {
    const allowed = Object.values(QWEN_IMAGE_SIZES);
    return m && allowed.includes(size as string) ? [w, h] : `parameters.size must be one of ${allowed.join(', ')} for ${model}.`;
  }
  if (spec.sizing === 'sides') return m && w >= 512 && h >= 512 && w <= 1440 && h <= 1440 ? [w, h] : `parameters.size must be width*height with each side from 512 to 1440 for ${model}.`;
  const ok = m && w * h >= 768 * 768 && w * h <= 1440 * 1440 && w / h <= 4 && h / w <= 4;
  return ok ? [w, h] : `parameters.size must be width*height with total pixels from 768*768 to 1440*1440 and a ratio from 1:4 to 4:1 for ${model}.`;
}

/** Models of image2image/image-synthesis (Wan 2.5 image edit): 1–3 input images, output 768*768 to 1280*1280 pixels. */
const EDIT_MODELS: Record<string, { maxN: number; maxPrompt: number; maxImages: number }> = {
  'wan2.5-i2i-preview': { maxN: 4, maxPrompt: 2000, maxImages: 3 },
};

/** An edit's `size` "W*H": total pixels from 768*768 to 1280*1280, ratio 1:4 to 4:1. */
function editSizeOf(model: string, size: unknown): [number, number] | string {
  const m = typeof size === 'string' ? /^(\d{2,5})\*(\d{2,5})$/.exec(size) : null;
  const [w, h] = m ? [Number(m[1]), Number(m[2])] : [0, 0];
  const ok = m && w * h >= 768 * 768 && w * h <= 1280 * 1280 && w / h <= 4 && h / w <= 4;
  return ok ? [w, h] : `parameters.size must be width*height with total pixels from 768*768 to 1280*1280 and a ratio from 1:4 to 4:1 for ${model}.`;
}

/** The body both calls share, checked; undefined when an error was sent. */
function readTask(ctx: SimContext, models: Record<string, { maxN: number; maxPrompt: number }>) {
  if (!dashscopeAsync(ctx)) return undefined;
  const body = readJson(ctx, (m) => dashscopeError('InvalidParameter', m));
  if (!body) return undefined;
  const model = typeof body.model === 'string' ? body.model : '';
  const spec = models[model];
  if (!spec) return invalid(ctx, 'Model not exist.');
  const input = body.input as Record<string, unknown> | undefined;
  const params = (body.parameters ?? {}) as Record<string, unknown>;
  if (!input || typeof input !== 'object' || typeof params !== 'object') return invalid(ctx, 'input and parameters must be objects.');
  const prompt = input.prompt;
  if (typeof prompt !== 'string' || !prompt) return invalid(ctx, 'input.prompt is required.', 'MissingParameter');
  if (prompt.length > spec.maxPrompt) return invalid(ctx, `input.prompt must be at most ${spec.maxPrompt} characters for ${model}.`);
  if (input.negative_prompt !== undefined && (typeof input.negative_prompt !== 'string' || input.negative_prompt.length > 500)) return invalid(ctx, 'input.negative_prompt must be a string of at most 500 characters.');
  // DashScope's `n` defaults to 4 on models that make more than one image a task.
  const n = params.n ?? Math.min(4, spec.maxN);
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > spec.maxN) return invalid(ctx, spec.maxN === 1 ? `parameters.n must be 1 for ${model}.` : `parameters.n must be an integer from 1 to ${spec.maxN}.`);
  const seed = params.seed;
  if (seed !== undefined && (typeof seed !== 'number' || !Number.isInteger(seed) || seed < 0 || seed > 2147483647)) return invalid(ctx, 'parameters.seed must be an integer in [0, 2147483647].');
  for (const k of ['prompt_extend', 'watermark']) if (params[k] !== undefined && typeof params[k] !== 'boolean') return invalid(ctx, `parameters.${k} must be a boolean.`);
  return { model, input, params, prompt, n, seed: (seed as number | undefined) ?? 0 };
}

function start(ctx: SimContext, t: Omit<ImageTask, 'id' | 'createdMs' | 'outcome' | 'cancelledMs'>): void {
  const id = uuid();
  part(ctx).tasks.set(id, { ...t, id, createdMs: Date.now(), outcome: outcomeOf(t.prompt), cancelledMs: null });
  sendJson(ctx.res, 200, { request_id: uuid(), output: { task_id: id, task_status: 'PENDING' } });
}

function create(ctx: SimContext): void {
  const r = readTask(ctx, WAN_IMAGE_MODELS);
  if (!r) return;
  const size = sizeOf(r.model, r.params.size ?? WAN_IMAGE_MODELS[r.model].defaultSize);
  if (typeof size === 'string') return invalid(ctx, size);
  start(ctx, { model: r.model, prompt: r.prompt, width: size[0], height: size[1], n: r.n, seed: r.seed });
}

/** Wan 2.5 image edit: input.images (1–3, URLs or data:image/…;base64 strings) redrawn by the prompt. */
function createEdit(ctx: SimContext): void {
  const r = readTask(ctx, EDIT_MODELS);
  if (!r) return;
  const images = r.input.images;
  const max = EDIT_MODELS[r.model].maxImages;
  if (!Array.isArray(images) || !images.length || images.length > max) return invalid(ctx, `input.images must hold 1 to ${max} images.`, images === undefined ? 'MissingParameter' : 'InvalidParameter');
  const inputs: Buffer[] = [];
  for (const [i, v] of images.entries()) {
    const got = imageInput(v, dataUrlImage);
    if (typeof got === 'string') return invalid(ctx, `input.images[${i}] ${got}.`);
    if (got) inputs.push(got);
  }
  // Without a size the output keeps about 1280*1280 pixels (the simulator draws it square).
  const size = r.params.size === undefined ? ([1280, 1280] as [number, number]) : editSizeOf(r.model, r.params.size);
  if (typeof size === 'string') return invalid(ctx, size);
  start(ctx, { model: r.model, prompt: r.prompt, width: size[0], height: size[1], n: r.n, seed: (r.seed ^ (inputs.length ? crc32(...inputs) : 0)) >>> 0 });
}

/** An image task as GET /api/v1/tasks/{id} answers it; undefined when the id is not an image task. */
export function wanImageTask(ctx: SimContext, id: string): unknown {
  const t = part(ctx).tasks.get(id);
  if (!t) return undefined;
  const { phase, since } = phaseAt(t.createdMs, t.outcome, imageTaskMs(ctx.state), Date.now(), t.cancelledMs);
  const output: Record<string, unknown> = { task_id: t.id, task_status: 'PENDING', submit_time: stamp(t.createdMs) };
  const answer = (o: Record<string, unknown>, usage?: unknown) => ({ request_id: uuid(), output: { ...output, ...o }, ...(usage ? { usage } : {}) });
  if (phase === 'queued') return answer({});
  if (phase === 'cancelled') return answer({ task_status: 'CANCELED', end_time: stamp(since) });
  output.scheduled_time = stamp(t.createdMs + Math.round(imageTaskMs(ctx.state) * 0.2));
  if (phase === 'running') return answer({ task_status: 'RUNNING' });
  if (t.outcome === 'expired') return { request_id: uuid(), output: { task_id: t.id, task_status: 'UNKNOWN' } };
  output.end_time = stamp(since);
  if (t.outcome === 'failed') return answer({ task_status: 'FAILED', code: 'InternalError.Algo', message: 'An internal error occurred during image generation.' });
  if (t.outcome === 'moderated') return answer({ task_status: 'FAILED', code: 'DataInspectionFailed', message: 'Output data may contain inappropriate content.' });
  const results = drawPictures(t.n, [t.width, t.height], t.prompt, [], t.seed).map((p) => ({ url: fileUrl(ctx, p), orig_prompt: t.prompt, actual_prompt: t.prompt }));
  return answer({ task_status: 'SUCCEEDED', results, task_metrics: { TOTAL: t.n, SUCCEEDED: t.n, FAILED: 0 } }, { image_count: t.n });
}

/** POST /api/v1/tasks/{id}/cancel for an image task: DashScope cancels PENDING tasks only. */
export function cancelWanImageTask(ctx: SimContext, id: string): void {
  const tasks = part(ctx).tasks;
  const t = tasks.get(id);
  const now = Date.now();
  if (!t || phaseAt(t.createdMs, t.outcome, imageTaskMs(ctx.state), now, t.cancelledMs).phase !== 'queued') {
    invalid(ctx, 'Failed to cancel the task, please confirm if the task is in PENDING status.', 'UnsupportedOperation');
    return;
  }
  t.cancelledMs = now;
  // Set again, so the change is saved.
  tasks.set(t.id, t);
  sendJson(ctx.res, 200, { request_id: uuid() });
}

export function wanImageRoutes(): SimRoute[] {
  return [
    { name: 'dashscope.images.create', method: 'POST', pattern: /^\/api\/v1\/services\/aigc\/text2image\/image-synthesis$/, auth: true, authenticate: dashscopeAuthenticate, errorBody: dashscopeErrorFor, handle: create },
    { name: 'dashscope.images.edit', method: 'POST', pattern: /^\/api\/v1\/services\/aigc\/image2image\/image-synthesis$/, auth: true, authenticate: dashscopeAuthenticate, errorBody: dashscopeErrorFor, handle: createEdit },
  ];
}

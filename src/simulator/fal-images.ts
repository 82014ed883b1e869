import { randomUUID } from 'node:crypto';
import { FAL_FORMATS, FAL_IMAGE_SIZES, FAL_MODELS, FAL_RATIOS } from '../providers/fal/wire.js';
import { sendJson, readJson, type SimContext, type SimRoute, type SimState } from './router.js';
import { outcomeOf, partState, phaseAt, taskMap, type SimOutcome } from './video-common.js';
import { dataUrlImage, drawPictures, imageInput, imageTaskMs, ratioOf, sizeForRatio } from './image-common.js';
import { fileUrl } from './images.js';

// The simulator's fal image part, in fal's queue wire format at the simulator's origin (standing
// for https://queue.fal.run), key as `Authorization: Key <key>`. It serves the image models below and
// the requests it made; every other one goes on to the fal video part (fal-video.ts):
//   POST /{model_id}                                   → {request_id, response_url, status_url, cancel_url, queue_position}
//   GET  /{owner}/{app}/requests/{id}/status           → {status: IN_QUEUE | IN_PROGRESS | COMPLETED, queue_position?, …}
//   GET  /{owner}/{app}/requests/{id}                  → the model's output once COMPLETED: {images:[{url, width, height,
//                                                        content_type}], seed, has_nsfw_concepts, timings, prompt}
//   PUT  /{owner}/{app}/requests/{id}/cancel           → 202 CANCELLATION_REQUESTED while queued, else 400
// Status and result live under the app's root (owner/app), without the model id's subpath, as on
// fal. Like fal, the queue takes any body: an invalid input fails at the end (status COMPLETED
// with `error`; the result answers 422 {detail:[{loc, msg, type}]}). "[moderation]" in the
// prompt ends with has_nsfw_concepts true (fal's safety checker; fal blacks those pictures out,
// the simulator draws one fixed picture for them); "[fail]" with a 500 result.

interface FalTask {
  id: string;
  model: string;
  app: string;
  createdMs: number;
  outcome: SimOutcome;
  /** The input's error, found at submission and told at the end ('' = none). */
  invalid: { loc: string[]; msg: string; type: string } | null;
  prompt: string;
  n: number;
  width: number;
  height: number;
  seed: number;
  format: string;
  cancelledMs: number | null;
}

const part = (state: SimState) => partState(state, 'fal.images', () => ({ tasks: taskMap<FalTask>(state, 'fal.images') }));

function authenticate(ctx: SimContext): boolean {
  if (/^Key \S+$/.test(String(ctx.req.headers.authorization ?? ''))) return true;
  sendJson(ctx.res, 401, { detail: 'No user found for Key ID and Secret' });
  return false;
}

const errorFor = (status: number, message: string) => ({ detail: status === 429 ? 'Too many requests' : message });

type Input = Record<string, unknown>;
type Checked = Pick<FalTask, 'invalid' | 'prompt' | 'n' | 'width' | 'height' | 'seed' | 'format'>;

/** Checks an input against the model's schema; the first error is kept for the end, as fal tells it. */
function check(model: string, input: Input): Checked {
  const spec = FAL_MODELS[model];
  const prompt = typeof input.prompt === 'string' ? input.prompt : '';
  const out: Checked = { invalid: null, prompt, n: 1, width: 1024, height: 1024, seed: 0, format: 'jpeg' };
  const fail = (field: string, msg: string, type = 'value_error') => ({ ...out, invalid: { loc: ['body', field], msg, type } });
  const common = ['prompt', 'seed', 'num_images', 'output_format', 'enable_safety_checker', 'sync_mode'];
  for (const k of Object.keys(input)) if (!common.includes(k) && !spec.takes.includes(k)) return fail(k, 'extra fields not permitted', 'value_error.extra');
  if (!prompt.trim()) return fail('prompt', 'field required', 'value_error.missing');
  for (const k of spec.needs) if (input[k] === undefined) return fail(k, 'field required', 'value_error.missing');
  const n = input.num_images ?? 1;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > spec.maxImages) return fail('num_images', `ensure this value is an integer from 1 to ${spec.maxImages}`);
  out.n = n;
  if (input.seed !== undefined && (typeof input.seed !== 'number' || !Number.isInteger(input.seed) || input.seed < 0)) return fail('seed', 'value is not a valid integer');
  out.seed = typeof input.seed === 'number' ? input.seed : Math.floor(Math.random() * 0xffffffff);
  const format = input.output_format ?? 'jpeg';
  if (typeof format !== 'string' || !FAL_FORMATS.includes(format)) return fail('output_format', `value is not a valid enumeration member; permitted: ${FAL_FORMATS.map((f) => `'${f}'`).join(', ')}`, 'type_error.enum');
  out.format = format;
  const size = input.image_size;
  if (typeof size === 'string') {
    if (!FAL_IMAGE_SIZES[size]) return fail('image_size', `value is not a valid enumeration member; permitted: ${Object.keys(FAL_IMAGE_SIZES).map((s) => `'${s}'`).join(', ')}`, 'type_error.enum');
    [out.width, out.height] = FAL_IMAGE_SIZES[size];
  } else if (size !== undefined) {
    const s = size as { width?: unknown; height?: unknown } | null;
    const side = (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v >= 64 && v <= 14142;
    if (!s || typeof s !== 'object' || !side(s.width) || !side(s.height)) return fail('image_size', 'width and height must be integers from 64 to 14142');
    [out.width, out.height] = [s.width as number, s.height as number];
  }
  if (input.aspect_ratio !== undefined) {
    if (typeof input.aspect_ratio !== 'string' || !FAL_RATIOS.includes(input.aspect_ratio)) return fail('aspect_ratio', `value is not a valid enumeration member; permitted: ${FAL_RATIOS.map((r) => `'${r}'`).join(', ')}`, 'type_error.enum');
    [out.width, out.height] = sizeForRatio(ratioOf(input.aspect_ratio)!, 1024 * 1024);
  }
  for (const k of ['image_url', 'mask_url']) {
    if (input[k] === undefined) continue;
    const img = imageInput(input[k], dataUrlImage);
    if (typeof img === 'string') return fail(k, `${k} ${img}`);
  }
  for (const k of ['strength', 'guidance_scale', 'num_inference_steps']) if (input[k] !== undefined && typeof input[k] !== 'number') return fail(k, 'value is not a valid number', 'type_error.float');
  return out;
}

const appOf = (model: string) => model.split('/').slice(0, 2).join('/');

function urls(ctx: SimContext, t: FalTask): Record<string, string> {
  const base = `${ctx.state.baseUrl}/${t.app}/requests/${t.id}`;
  return { response_url: base, status_url: `${base}/status`, cancel_url: `${base}/cancel` };
}

function stateOf(ctx: SimContext, t: FalTask, now = Date.now()) {
  return phaseAt(t.createdMs, t.outcome, imageTaskMs(ctx.state), now, t.cancelledMs);
}

function submit(ctx: SimContext): void {
  const model = ctx.params[0];
  if (!FAL_MODELS[model]) return sendJson(ctx.res, 404, { detail: `Application '${model}' not found` });
  const input = readJson(ctx, (m) => ({ detail: m }));
  if (!input) return;
  const checked = check(model, input);
  const p = part(ctx.state);
  const t: FalTask = { id: randomUUID(), model, app: appOf(model), createdMs: Date.now(), outcome: outcomeOf(checked.prompt), cancelledMs: null, ...checked };
  p.tasks.set(t.id, t);
  sendJson(ctx.res, 200, { request_id: t.id, ...urls(ctx, t), queue_position: 0 });
}

function taskAt(ctx: SimContext): FalTask | undefined {
  const t = part(ctx.state).tasks.get(ctx.params[1]);
  if (t && t.app === ctx.params[0]) return t;
  sendJson(ctx.res, 404, { detail: `Request ${ctx.params[1]} not found` });
  return undefined;
}

function status(ctx: SimContext): void {
  const t = taskAt(ctx);
  if (!t) return;
  const { phase } = stateOf(ctx, t);
  const body: Record<string, unknown> = { status: phase === 'queued' ? 'IN_QUEUE' : phase === 'running' ? 'IN_PROGRESS' : 'COMPLETED', request_id: t.id, ...urls(ctx, t), logs: null };
  if (phase === 'queued') body.queue_position = 0;
  if (phase === 'cancelled') Object.assign(body, { error: 'Request was cancelled', error_type: 'request_cancelled' });
  else if (phase === 'done' && t.invalid) Object.assign(body, { error: t.invalid.msg, error_type: 'validation_error' });
  else if (phase === 'done' && t.outcome !== 'succeeded' && t.outcome !== 'moderated') Object.assign(body, { error: 'Internal error while running the model', error_type: 'runner_error' });
  sendJson(ctx.res, 200, body);
}

function result(ctx: SimContext): void {
  const t = taskAt(ctx);
  if (!t) return;
  const { phase } = stateOf(ctx, t);
  if (phase === 'queued' || phase === 'running') return sendJson(ctx.res, 400, { detail: 'Request is still in progress' });
  if (phase === 'cancelled') return sendJson(ctx.res, 400, { detail: 'Request was cancelled' });
  if (t.invalid) return sendJson(ctx.res, 422, { detail: [t.invalid] });
  if (t.outcome !== 'succeeded' && t.outcome !== 'moderated') return sendJson(ctx.res, 500, { detail: 'Internal error while running the model' });
  const nsfw = t.outcome === 'moderated';
  const pics = drawPictures(t.n, [t.width, t.height], nsfw ? '' : t.prompt, [], nsfw ? 0 : t.seed);
  sendJson(ctx.res, 200, {
    images: pics.map((p) => ({ url: fileUrl(ctx, p), width: p.width, height: p.height, content_type: 'image/png' })),
    timings: { inference: 0.4 },
    seed: t.seed,
    has_nsfw_concepts: pics.map(() => nsfw),
    prompt: t.prompt,
  });
}

function cancel(ctx: SimContext): void {
  const t = taskAt(ctx);
  if (!t) return;
  if (stateOf(ctx, t).phase !== 'queued') return sendJson(ctx.res, 400, { status: 'ALREADY_COMPLETED' });
  t.cancelledMs = Date.now();
  part(ctx.state).tasks.set(t.id, t);
  sendJson(ctx.res, 202, { status: 'CANCELLATION_REQUESTED' });
}

export function falImageRoutes(): SimRoute[] {
  const app = '([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)';
  const mine = (url: URL, state: SimState) => part(state).tasks.has(url.pathname.split('/')[4] ?? '');
  const common = { auth: true, authenticate, errorBody: errorFor, claims: (_: unknown, url: URL, state: SimState) => mine(url, state) };
  return [
    { name: 'fal.images.status', method: 'GET', pattern: new RegExp(`^/${app}/requests/([0-9a-f-]{36})/status$`), ...common, handle: status },
    { name: 'fal.images.result', method: 'GET', pattern: new RegExp(`^/${app}/requests/([0-9a-f-]{36})$`), ...common, handle: result },
    { name: 'fal.images.cancel', method: 'PUT', pattern: new RegExp(`^/${app}/requests/([0-9a-f-]{36})/cancel$`), ...common, handle: cancel },
    { name: 'fal.images.submit', method: 'POST', pattern: /^\/([A-Za-z0-9_.-]+\/[A-Za-z0-9_./-]+)$/, ...common, claims: (_: unknown, url: URL) => !!FAL_MODELS[url.pathname.slice(1)], handle: submit },
  ];
}

import { REPLICATE_MODELS, REPLICATE_SIZES } from '../providers/replicate/wire.js';
import { cancelVideoPrediction, getVideoPrediction } from './replicate-video.js';
import { sendJson, readJson, type SimContext, type SimRoute, type SimState } from './router.js';
import { newId, outcomeOf, partState, phaseAt, taskMap, type SimOutcome } from './video-common.js';
import { dataUrlImage, drawPictures, imageInput, imageTaskMs } from './image-common.js';
import { fileUrl } from './images.js';

// The simulator's Replicate part, in Replicate's predictions wire format (Bearer key):
//   POST /v1/models/{owner}/{name}/predictions  {input, webhook?}  → 201 the prediction (status "starting");
//        with `Prefer: wait[=s]` the answer waits up to s seconds (60 at most) for the end
//   GET  /v1/predictions/{id}                   → {id, model, input, status, output, error, logs, metrics, urls, …}
//   POST /v1/predictions/{id}/cancel            → the prediction, canceled unless it already ended
// Statuses starting → processing → succeeded | failed | canceled. Input errors are refused at
// creation with 422 problem JSON {title, detail, status, invalid_fields}. "[moderation]" in the
// prompt fails the prediction with Replicate's NSFW error, "[fail]" with a generic one.

interface Prediction {
  id: string;
  model: string;
  input: Record<string, unknown>;
  createdMs: number;
  outcome: SimOutcome;
  cancelledMs: number | null;
  n: number;
  width: number;
  height: number;
  seed: number;
}

const part = (state: SimState) => partState(state, 'replicate.images', () => ({ tasks: taskMap<Prediction>(state, 'replicate.images') }));

const problem = (status: number, title: string, detail: string, extra: Record<string, unknown> = {}) => ({ title, detail, status, ...extra });
const errorFor = (status: number, message: string) => problem(status, status === 429 ? 'Request was throttled' : status >= 500 ? 'Internal server error' : 'Invalid request', message);

function authenticate(ctx: SimContext): boolean {
  if (/^(Bearer|Token) \S+$/.test(String(ctx.req.headers.authorization ?? ''))) return true;
  sendJson(ctx.res, 401, problem(401, 'Unauthenticated', 'You did not pass a valid authentication token'));
  return false;
}

/** Checks an input against the model's inputs; the invalid fields, none when it holds. */
function invalidFields(model: string, input: Record<string, unknown>): { type: string; field: string; description: string }[] {
  const spec = REPLICATE_MODELS[model];
  const out: { type: string; field: string; description: string }[] = [];
  const add = (field: string, description: string, type = 'invalid') => out.push({ type, field, description });
  if (typeof input.prompt !== 'string' || !input.prompt.trim()) add('prompt', 'prompt is required', 'required');
  for (const k of spec.needs) if (input[k] === undefined) add(k, `${k} is required`, 'required');
  if (input.seed !== undefined && (typeof input.seed !== 'number' || !Number.isInteger(input.seed))) add('seed', 'Invalid type. Expected: integer');
  for (const [k, v] of Object.entries(input)) {
    if (k === 'prompt' || k === 'seed') continue;
    const want = spec.inputs[k];
    if (want === undefined) add(k, `Additional property ${k} is not allowed`, 'additional_property_not_allowed');
    else if (want === 'number' && typeof v !== 'number') add(k, 'Invalid type. Expected: number');
    else if (want === 'boolean' && typeof v !== 'boolean') add(k, 'Invalid type. Expected: boolean');
    else if (want === 'image' && typeof imageInput(v, dataUrlImage) === 'string') add(k, 'Does not match format uri');
    else if (Array.isArray(want) && !want.includes(String(v))) add(k, `${k} must be one of the following: ${want.map((w) => `"${w}"`).join(', ')}`, 'enum');
  }
  if (input.num_outputs !== undefined && typeof input.num_outputs !== 'number') add('num_outputs', 'Invalid type. Expected: integer');
  return out;
}

function view(ctx: SimContext, t: Prediction, now = Date.now()): Record<string, unknown> {
  const { phase, since } = phaseAt(t.createdMs, t.outcome, imageTaskMs(ctx.state), now, t.cancelledMs);
  const status = phase === 'queued' ? 'starting' : phase === 'running' ? 'processing' : phase === 'cancelled' ? 'canceled' : t.outcome === 'succeeded' ? 'succeeded' : 'failed';
  const base = `${ctx.state.baseUrl}/v1/predictions/${t.id}`;
  const iso = (ms: number) => new Date(ms).toISOString();
  let output: unknown = null;
  let error: string | null = null;
  if (status === 'succeeded') {
    const urls = drawPictures(t.n, [t.width, t.height], String(t.input.prompt), [], t.seed).map((p) => fileUrl(ctx, p));
    output = REPLICATE_MODELS[t.model].list ? urls : urls[0];
  } else if (status === 'failed') {
    error = t.outcome === 'moderated' ? 'NSFW content detected. Try running it again, or try a different prompt.' : 'Prediction failed.';
  }
  const ended = status === 'succeeded' || status === 'failed' || status === 'canceled';
  return {
    id: t.id,
    model: t.model,
    version: 'hidden',
    input: t.input,
    logs: phase === 'queued' ? '' : `Using seed: ${t.seed}\n`,
    output,
    data_removed: false,
    error,
    status,
    created_at: iso(t.createdMs),
    ...(phase !== 'queued' ? { started_at: iso(t.createdMs + Math.round(imageTaskMs(ctx.state) * 0.2)) } : {}),
    ...(ended ? { completed_at: iso(since) } : {}),
    urls: { get: base, cancel: `${base}/cancel`, web: `https://replicate.com/p/${t.id}` },
    metrics: status === 'succeeded' ? { predict_time: (since - t.createdMs) / 1000, image_count: t.n } : {},
  };
}

async function create(ctx: SimContext): Promise<void> {
  const model = `${ctx.params[0]}/${ctx.params[1]}`;
  if (!REPLICATE_MODELS[model]) return sendJson(ctx.res, 404, problem(404, 'Not found', 'The requested resource could not be found.'));
  const body = readJson(ctx, (m) => problem(400, 'Invalid request', m));
  if (!body) return;
  const input = body.input;
  if (!input || typeof input !== 'object' || Array.isArray(input)) return sendJson(ctx.res, 422, problem(422, 'Input validation failed', '- input: Invalid type. Expected: object', { invalid_fields: [{ type: 'invalid_type', field: 'input', description: 'Invalid type. Expected: object' }] }));
  if (body.webhook !== undefined && (typeof body.webhook !== 'string' || !/^https:\/\//.test(body.webhook))) return sendJson(ctx.res, 422, problem(422, 'Invalid webhook', 'The webhook must be an HTTPS URL.'));
  const fields = input as Record<string, unknown>;
  const invalid = invalidFields(model, fields);
  if (invalid.length) return sendJson(ctx.res, 422, problem(422, 'Input validation failed', invalid.map((f) => `- input.${f.field}: ${f.description}\n`).join(''), { invalid_fields: invalid }));
  const [width, height] = REPLICATE_SIZES[typeof fields.aspect_ratio === 'string' && REPLICATE_SIZES[fields.aspect_ratio] ? fields.aspect_ratio : '1:1'];
  const p = part(ctx.state);
  const t: Prediction = {
    id: newId(p.tasks, 26, '0123456789abcdefghjkmnpqrstvwxyz'),
    model,
    input: fields,
    createdMs: Date.now(),
    outcome: outcomeOf(String(fields.prompt)),
    cancelledMs: null,
    n: typeof fields.num_outputs === 'number' ? fields.num_outputs : 1,
    width,
    height,
    seed: typeof fields.seed === 'number' ? fields.seed : Math.floor(Math.random() * 65536),
  };
  p.tasks.set(t.id, t);
  // Prefer: wait[=s] holds the answer until the prediction ends or s seconds pass (1–60).
  const wait = /^wait(?:=(\d+))?$/.exec(String(ctx.req.headers.prefer ?? '').trim());
  if (wait) {
    const limit = Date.now() + Math.min(60, Math.max(1, Number(wait[1] ?? 60))) * 1000;
    const done = t.createdMs + imageTaskMs(ctx.state);
    if (t.outcome !== 'stuck') await new Promise((r) => setTimeout(r, Math.max(0, Math.min(done, limit) - Date.now()) + 5));
    else await new Promise((r) => setTimeout(r, Math.max(0, limit - Date.now())));
  }
  sendJson(ctx.res, 201, view(ctx, t));
}

// One predictions API serves images and videos (as Replicate's does): an id this part does not
// know may be a video prediction.
function get(ctx: SimContext): void {
  const t = part(ctx.state).tasks.get(ctx.params[0]);
  if (!t) return getVideoPrediction(ctx);
  sendJson(ctx.res, 200, view(ctx, t));
}

function cancel(ctx: SimContext): void {
  const t = part(ctx.state).tasks.get(ctx.params[0]);
  if (!t) return cancelVideoPrediction(ctx);
  const { phase } = phaseAt(t.createdMs, t.outcome, imageTaskMs(ctx.state), Date.now(), t.cancelledMs);
  if (phase === 'queued' || phase === 'running') {
    t.cancelledMs = Date.now();
    part(ctx.state).tasks.set(t.id, t);
  }
  sendJson(ctx.res, 200, view(ctx, t));
}

export function replicateImageRoutes(): SimRoute[] {
  // The image models below and their predictions; every other one goes on to the video part.
  const mine = (_: unknown, url: URL, state: SimState) => part(state).tasks.has(url.pathname.split('/')[3] ?? '');
  const common = { auth: true, authenticate, errorBody: errorFor };
  return [
    { name: 'replicate.predictions.create', method: 'POST', pattern: /^\/v1\/models\/([A-Za-z0-9_.-]+)\/([A-Za-z0-9_.-]+)\/predictions$/, ...common, claims: (_: unknown, url: URL) => !!REPLICATE_MODELS[url.pathname.split('/').slice(3, 5).join('/')], handle: create },
    { name: 'replicate.predictions.get', method: 'GET', pattern: /^\/v1\/predictions\/([a-z0-9]{26})$/, ...common, claims: mine, handle: get },
    { name: 'replicate.predictions.cancel', method: 'POST', pattern: /^\/v1\/predictions\/([a-z0-9]{26})\/cancel$/, ...common, claims: mine, handle: cancel },
  ];
}

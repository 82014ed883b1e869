import { readJson, sendJson, type SimContext, type SimRoute, type SimState } from './router.js';
import { newId, openId, outcomeOf, partState, phaseAt, sealId, sendSampleVideo, taskMap, videoSecret, type SimOutcome } from './video-common.js';

// The simulator's Replicate part, in Replicate's predictions API:
//   POST /v1/predictions             {version, input} → 201, the prediction
//   GET  /v1/predictions/{id}        → {id, model, version, input, status, output, error, logs, metrics, urls, created_at, started_at, completed_at}
//   POST /v1/predictions/{id}/cancel → the prediction (canceled unless it had finished)
// `version` is an official model's name, "owner/name:version", or a 64-character version id.
// Bearer tokens; errors are problem details {title, detail, status}. Outcome markers: [fail] and
// [moderation] end `failed` (the latter with Replicate's E005 "flagged as sensitive" error),
// [cancel] `canceled`, [expire] `aborted`. Outputs are public links deleted an hour later.

interface Model {
  /** The input field of the first and last frame. */
  first: string;
  last?: string;
  durations: number[];
  resolutions: string[];
  /** The output: one URL, or a list of them. */
  list: boolean;
}

const MODELS: Record<string, Model> = {
  'bytedance/seedance-1-pro': { first: 'image', last: 'last_frame_image', durations: [5, 10], resolutions: ['480p', '1080p'], list: false },
  'minimax/hailuo-02': { first: 'first_frame_image', last: 'last_frame_image', durations: [6, 10], resolutions: ['768p', '1080p'], list: false },
  'google/veo-3-fast': { first: 'image', durations: [8], resolutions: ['720p', '1080p'], list: true },
};
const VERSION_ID = /^[0-9a-f]{64}$/;
const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';
const FILE = /^\/__sim\/replicate\/([0-9a-z]+)\/output\.mp4$/;

interface Prediction {
  id: string;
  model: string;
  version: string;
  input: Record<string, unknown>;
  createdMs: number;
  outcome: SimOutcome;
  cancelledMs: number | null;
}

const part = (state: SimState) => partState(state, 'replicate.video', () => ({ predictions: taskMap<Prediction>(state, 'replicate.video') }));
const problem = (status: number, title: string, detail: string) => ({ title, detail, status });

function authenticate(ctx: SimContext): boolean {
  if (/^Bearer \S+$/.test(String(ctx.req.headers.authorization ?? ''))) return true;
  sendJson(ctx.res, 401, problem(401, 'Unauthenticated', 'You did not pass a valid authentication token'));
  return false;
}

const invalid = (ctx: SimContext, detail: string) => void sendJson(ctx.res, 422, problem(422, 'Input validation failed', detail));

/** The model a `version` names: an official model by name, or a name with a version id. */
function modelOf(version: unknown): { model: string; version: string } | undefined {
  if (typeof version !== 'string') return undefined;
  const [name, id] = version.split(':');
  if (!MODELS[name] || (id !== undefined && !VERSION_ID.test(id))) return undefined;
  return { model: name, version: id ?? '' };
}

const iso = (ms: number) => new Date(ms).toISOString();

function view(state: SimState, p: Prediction, now: number): Record<string, unknown> {
  const totalMs = state.options.videoSeconds * 1000;
  const { phase, since } = phaseAt(p.createdMs, p.outcome, totalMs, now, p.cancelledMs);
  const base = state.baseUrl;
  const out: Record<string, unknown> = {
    id: p.id, model: p.model, version: p.version || 'official', input: p.input, logs: '', output: null, error: null, data_removed: false,
    created_at: iso(p.createdMs), started_at: null, completed_at: null, urls: { get: `${base}/v1/predictions/${p.id}`, cancel: `${base}/v1/predictions/${p.id}/cancel` },
  };
  if (phase === 'queued') return { ...out, status: 'starting' };
  out.started_at = iso(p.createdMs + Math.round(totalMs * 0.2));
  if (phase === 'running') return { ...out, status: 'processing' };
  const done = { ...out, completed_at: iso(since) };
  if (phase === 'cancelled') return { ...done, status: 'canceled' };
  if (p.outcome === 'expired') return { ...done, status: 'aborted' };
  if (p.outcome === 'moderated') return { ...done, status: 'failed', error: 'The input or output was flagged as sensitive. Please try again with different inputs. (E005)' };
  if (p.outcome !== 'succeeded') return { ...done, status: 'failed', error: 'Prediction failed: the model could not generate the video.' };
  const url = `${base}/__sim/replicate/${sealId(videoSecret(state), p.id, 8, ALPHABET)}/output.mp4`;
  return { ...done, status: 'succeeded', output: MODELS[p.model].list ? [url] : url, metrics: { predict_time: totalMs / 1000 } };
}

function create(ctx: SimContext): void {
  const body = readJson(ctx, (m) => problem(400, 'Invalid JSON', m));
  if (!body) return;
  const named = modelOf(body.version);
  if (!named) return void sendJson(ctx.res, 422, problem(422, 'Invalid version or not permitted', `The specified version does not exist (or perhaps you don't have permission to use it?): ${String(body.version)}`));
  const spec = MODELS[named.model];
  const input = body.input as Record<string, unknown> | undefined;
  if (!input || typeof input !== 'object' || Array.isArray(input)) return invalid(ctx, '- input: Invalid type. Expected: object');
  if (typeof input.prompt !== 'string' || !input.prompt) return invalid(ctx, '- input: prompt is required');
  for (const [k, v] of Object.entries(input)) {
    if ((k === 'image' || k.endsWith('_image')) && !(typeof v === 'string' && /^(https?:\/\/|data:image\/)/.test(v))) return invalid(ctx, `- input.${k}: Does not match format 'uri'`);
    if ((k === 'image' || k.endsWith('_image')) && k !== spec.first && k !== spec.last) return invalid(ctx, `- input: Additional property ${k} is not allowed`);
  }
  if (spec.last && input[spec.last] !== undefined && input[spec.first] === undefined) return invalid(ctx, `- input.${spec.last}: needs ${spec.first}`);
  if (input.duration !== undefined && !spec.durations.includes(input.duration as number)) return invalid(ctx, `- input.duration: Must be one of the following: ${spec.durations.join(', ')}`);
  if (input.resolution !== undefined && !spec.resolutions.includes(input.resolution as string)) return invalid(ctx, `- input.resolution: Must be one of the following: ${spec.resolutions.map((r) => `"${r}"`).join(', ')}`);
  const p = part(ctx.state);
  const id = newId(p.predictions, 26, ALPHABET);
  const prediction: Prediction = { id, ...named, input, createdMs: Date.now(), outcome: outcomeOf(input.prompt), cancelledMs: null };
  p.predictions.set(id, prediction);
  sendJson(ctx.res, 201, view(ctx.state, prediction, Date.now()));
}

function find(ctx: SimContext): Prediction | undefined {
  const p = part(ctx.state).predictions.get(ctx.params[0]);
  if (!p) sendJson(ctx.res, 404, problem(404, 'Not found', 'The requested resource could not be found.'));
  return p;
}

/** GET /v1/predictions/{id} of a video prediction (Replicate has one predictions API: the image part hands over ids it does not know). */
export function getVideoPrediction(ctx: SimContext): void {
  const p = find(ctx);
  if (p) sendJson(ctx.res, 200, view(ctx.state, p, Date.now()));
}

/** POST /v1/predictions/{id}/cancel of a video prediction. */
export function cancelVideoPrediction(ctx: SimContext): void {
  cancel(ctx);
}

function cancel(ctx: SimContext): void {
  const p = find(ctx);
  if (!p) return;
  const now = Date.now();
  const status = view(ctx.state, p, now).status;
  if (status === 'starting' || status === 'processing') part(ctx.state).predictions.set(p.id, { ...p, cancelledMs: now });
  sendJson(ctx.res, 200, view(ctx.state, part(ctx.state).predictions.get(p.id)!, now));
}

function serveFile(ctx: SimContext): void {
  if (openId(videoSecret(ctx.state), ctx.params[0], 8, ALPHABET) === undefined) return sendJson(ctx.res, 404, problem(404, 'Not found', 'The file has been removed.'));
  sendSampleVideo(ctx);
}

const errorBody = (status: number, message: string) => problem(status, status === 429 ? 'Request was throttled.' : 'Error', message);

export function replicateVideoRoutes(): SimRoute[] {
  return [
    { name: 'replicate.video.create', method: 'POST', pattern: /^\/v1\/predictions$/, auth: true, authenticate, errorBody, handle: create },
    { name: 'replicate.video.get', method: 'GET', pattern: /^\/v1\/predictions\/([a-z0-9]+)$/, auth: true, authenticate, errorBody, handle: getVideoPrediction },
    { name: 'replicate.video.cancel', method: 'POST', pattern: /^\/v1\/predictions\/([a-z0-9]+)\/cancel$/, auth: true, authenticate, errorBody, handle: cancel },
    { name: 'replicate.video.file', method: 'GET', pattern: FILE, auth: false, handle: serveFile },
    { name: 'replicate.video.file', method: 'HEAD', pattern: FILE, auth: false, handle: serveFile },
  ];
}

import { readJson, sendJson, type SimContext, type SimRoute, type SimState } from './router.js';
import { openId, outcomeOf, partState, phaseAt, sealId, sendSampleVideo, taskMap, uuid, videoSecret, type SimOutcome } from './video-common.js';

// The simulator's fal part, in the wire format of fal's queue (queue.fal.run):
//   POST /{endpoint id}                        (fal-ai/<app>/…) → {request_id, response_url, status_url, cancel_url, queue_position}
//   GET  /fal-ai/{app}/requests/{id}/status     → {status: IN_QUEUE | IN_PROGRESS | COMPLETED, queue_position?, response_url, …}
//   GET  /fal-ai/{app}/requests/{id}            → the output {video: {url, content_type, file_name, file_size}}, or its error
//   PUT  /fal-ai/{app}/requests/{id}/cancel     → 202 {status: CANCELLATION_REQUESTED} | 400 {status: ALREADY_COMPLETED}
// Status and result live under the app id (fal-ai/<app>), whatever the endpoint's path. The key
// travels as `Authorization: Key …`. Input errors are 422 {detail: [{loc, msg, type}]}. Outcome
// markers: [fail] → 422 generation error, [moderation] → 422 content_policy_violation, [cancel] →
// cancelled when it leaves the queue (499 client_cancelled), [expire] → 504 request_timeout.

interface Endpoint {
  image: boolean;
  durations: string[];
  ratios?: string[];
}

/** The video endpoints the part serves (from fal's model pages). */
const ENDPOINTS: Record<string, Endpoint> = {
  'fal-ai/kling-video/v2.1/standard/text-to-video': { image: false, durations: ['5', '10'], ratios: ['16:9', '9:16', '1:1'] },
  'fal-ai/kling-video/v2.1/standard/image-to-video': { image: true, durations: ['5', '10'] },
  'fal-ai/minimax/hailuo-02/standard/text-to-video': { image: false, durations: ['6', '10'] },
  'fal-ai/minimax/hailuo-02/standard/image-to-video': { image: true, durations: ['6', '10'] },
};
const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';
const FILE = /^\/__sim\/fal\/files\/([0-9a-z]+)\/output\.mp4$/;

interface FalRequest {
  id: string;
  app: string;
  prompt: string;
  createdMs: number;
  outcome: SimOutcome;
  cancelledMs: number | null;
}

const part = (state: SimState) => partState(state, 'fal.video', () => ({ requests: taskMap<FalRequest>(state, 'fal.video') }));
const fileIdOf = (state: SimState, id: string) => sealId(videoSecret(state), id.replace(/-/g, ''), 8, ALPHABET);

function authenticate(ctx: SimContext): boolean {
  if (/^Key \S+$/.test(String(ctx.req.headers.authorization ?? ''))) return true;
  sendJson(ctx.res, 401, { detail: 'Authentication is required: send "Authorization: Key <your fal key>".' });
  return false;
}

const invalid = (ctx: SimContext, field: string, msg: string, type = 'value_error') => void sendJson(ctx.res, 422, { detail: [{ loc: ['body', field], msg, type }] });

function urls(state: SimState, app: string, id: string) {
  const base = `${state.baseUrl}/${app}/requests/${id}`;
  return { response_url: base, status_url: `${base}/status`, cancel_url: `${base}/cancel` };
}

function phaseOf(state: SimState, r: FalRequest, now: number) {
  return phaseAt(r.createdMs, r.outcome, state.options.videoSeconds * 1000, now, r.cancelledMs).phase;
}

function create(ctx: SimContext): void {
  const endpoint = ctx.params[0];
  const spec = ENDPOINTS[`fal-ai/${endpoint}`];
  if (!spec) return sendJson(ctx.res, 404, { detail: `Application 'fal-ai/${endpoint}' not found` });
  const body = readJson(ctx, () => ({ detail: [{ loc: ['body'], msg: 'Input should be a valid JSON object', type: 'model_attributes_type' }] }));
  if (!body) return;
  if (typeof body.prompt !== 'string' || !body.prompt) return invalid(ctx, 'prompt', 'Field required', 'missing');
  if (spec.image && !(typeof body.image_url === 'string' && /^(https?:\/\/|data:image\/)/.test(body.image_url))) return invalid(ctx, 'image_url', 'Field required: a URL or a data URI of the first frame', 'missing');
  if (!spec.image && body.image_url !== undefined) return invalid(ctx, 'image_url', 'Extra inputs are not permitted', 'extra_forbidden');
  if (body.duration !== undefined && !spec.durations.includes(body.duration as string)) return invalid(ctx, 'duration', `Input should be ${spec.durations.map((d) => `'${d}'`).join(' or ')}`, 'literal_error');
  if (body.aspect_ratio !== undefined && !(spec.ratios ?? []).includes(body.aspect_ratio as string)) return invalid(ctx, 'aspect_ratio', spec.ratios ? `Input should be ${spec.ratios.map((r) => `'${r}'`).join(', ')}` : 'Extra inputs are not permitted', spec.ratios ? 'literal_error' : 'extra_forbidden');
  const app = `fal-ai/${endpoint.split('/')[0]}`;
  const p = part(ctx.state);
  let id = uuid();
  while (p.requests.has(id)) id = uuid();
  p.requests.set(id, { id, app, prompt: body.prompt, createdMs: Date.now(), outcome: outcomeOf(body.prompt), cancelledMs: null });
  sendJson(ctx.res, 200, { status: 'IN_QUEUE', request_id: id, ...urls(ctx.state, app, id), queue_position: 0 });
}

function find(ctx: SimContext): FalRequest | undefined {
  const r = part(ctx.state).requests.get(ctx.params[1]);
  if (r && r.app === `fal-ai/${ctx.params[0]}`) return r;
  sendJson(ctx.res, 404, { detail: 'Request not found' });
  return undefined;
}

function status(ctx: SimContext): void {
  const r = find(ctx);
  if (!r) return;
  const phase = phaseOf(ctx.state, r, Date.now());
  const word = phase === 'queued' ? 'IN_QUEUE' : phase === 'running' ? 'IN_PROGRESS' : 'COMPLETED';
  sendJson(ctx.res, 200, { status: word, request_id: r.id, ...urls(ctx.state, r.app, r.id), ...(phase === 'queued' ? { queue_position: 0 } : {}) });
}

function result(ctx: SimContext): void {
  const r = find(ctx);
  if (!r) return;
  const phase = phaseOf(ctx.state, r, Date.now());
  if (phase === 'queued' || phase === 'running') return sendJson(ctx.res, 400, { detail: 'Request is still in progress' });
  if (phase === 'cancelled') return sendJson(ctx.res, 499, { detail: 'Request was cancelled', error_type: 'client_cancelled' }, { 'x-fal-error-type': 'client_cancelled' });
  if (r.outcome === 'moderated') return invalid(ctx, 'prompt', 'The content could not be processed because it contained material flagged by a content checker.', 'content_policy_violation');
  if (r.outcome === 'expired') return sendJson(ctx.res, 504, { detail: 'Request timed out', error_type: 'request_timeout' }, { 'x-fal-error-type': 'request_timeout' });
  if (r.outcome !== 'succeeded') return invalid(ctx, 'prompt', 'Video generation failed. Please try again.', 'generation_error');
  const url = `${ctx.state.baseUrl}/__sim/fal/files/${fileIdOf(ctx.state, r.id)}/output.mp4`;
  sendJson(ctx.res, 200, { video: { url, content_type: 'video/mp4', file_name: 'output.mp4', file_size: 0 } });
}

function cancel(ctx: SimContext): void {
  const r = find(ctx);
  if (!r) return;
  const now = Date.now();
  const phase = phaseOf(ctx.state, r, now);
  if (phase === 'done' || phase === 'cancelled') return sendJson(ctx.res, 400, { status: 'ALREADY_COMPLETED' });
  part(ctx.state).requests.set(r.id, { ...r, cancelledMs: now });
  sendJson(ctx.res, 202, { status: 'CANCELLATION_REQUESTED' });
}

function serveFile(ctx: SimContext): void {
  if (openId(videoSecret(ctx.state), ctx.params[0], 8, ALPHABET) === undefined) return sendJson(ctx.res, 404, { detail: 'Not Found' });
  sendSampleVideo(ctx);
}

const errorBody = (status: number, message: string) => (status >= 500 ? { detail: message, error_type: 'runner_server_error' } : { detail: message });

export function falVideoRoutes(): SimRoute[] {
  const REQ = '^\\/fal-ai\\/([A-Za-z0-9_.-]+)\\/requests\\/([0-9a-f-]+)';
  return [
    { name: 'fal.video.status', method: 'GET', pattern: new RegExp(`${REQ}\\/status$`), auth: true, authenticate, errorBody, handle: status },
    { name: 'fal.video.result', method: 'GET', pattern: new RegExp(`${REQ}$`), auth: true, authenticate, errorBody, handle: result },
    { name: 'fal.video.cancel', method: 'PUT', pattern: new RegExp(`${REQ}\\/cancel$`), auth: true, authenticate, errorBody, handle: cancel },
    { name: 'fal.video.create', method: 'POST', pattern: /^\/fal-ai\/([A-Za-z0-9_./-]+)$/, auth: true, authenticate, errorBody, handle: create },
    { name: 'fal.video.file', method: 'GET', pattern: FILE, auth: false, handle: serveFile },
    { name: 'fal.video.file', method: 'HEAD', pattern: FILE, auth: false, handle: serveFile },
  ];
}

import { errors } from '../../http/errors.js';
import type { Target } from '../../upstream/target.js';
import { UpstreamFailure } from '../../upstream/failure.js';
import { readJsonBody } from '../../upstream/json.js';
import { usageCount } from '../../upstream/usage-number.js';
import { signedUrlExpiry } from '../signed-url.js';
import type { BillableUnits, ProviderTaskState, VideoAdapter, VideoCall, VideoGenerationRequest, VideoModelCaps } from '../video-types.js';
import { arkFailure, arkHeaders, arkUrl } from './api.js';
import { sizesFromCaps, uniqueSizes } from '../video-sizes.js';
import { refuseReserved } from '../video-support.js';
import { ARK_DEFAULT_EXPIRES_S, ARK_TASK_STATUSES, SEEDANCE_FPS, SEEDANCE_RATIOS, SEEDANCE_RESOLUTIONS, SEEDANCE_SIZES, videoTokens } from './wire.js';

// Ark content generation tasks (Seedance):
//   POST   /api/v3/contents/generations/tasks       {model, content[], <params>} → {id}
//   GET    /api/v3/contents/generations/tasks/{id}  → the task object
//   DELETE /api/v3/contents/generations/tasks/{id}  → {} (a queued task becomes cancelled)
//   GET    /api/v3/contents/generations/tasks?page_num=1&page_size=N&filter.task_ids=a&filter.task_ids=b
//          → {total, items: [task object, …]} (the poller's batched read; tasks of the last 7 days)
// content[] holds one {type:"text", text} and {type:"image_url", image_url:{url}, role} items;
// generation parameters are top-level fields.

const TASKS = '/contents/generations/tasks';
/**
 * Ids per batched read. Ark takes page_size up to 500; 100 ids keep the query string near 4.5 KB,
 * under the 8 KB request-line limit common to proxies in front of an API.
 */
export const ARK_LIST_IDS = 100;
// Fields the gateway builds itself; metadata cannot replace them. A client's callback_url would
// have the provider (or the embedded simulator, inside the gateway's process) POST wherever it
// points: it is refused at validation and never copied.
const RESERVED = new Set(['model', 'content', 'callback_url']);
const REFUSED_IN_METADATA = ['content', 'callback_url'];
const SERVICE_TIERS = ['default', 'flex'];
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/** Seedance 1.0 takes 2–12 s; 1.5 pro starts at 4 s. Every model renders 24 fps. */
function seedanceCaps(upstreamModel: string): VideoModelCaps {
  return {
    durations: /seedance-1-5/.test(upstreamModel) ? range(4, 12) : range(2, 12),
    resolutions: SEEDANCE_RESOLUTIONS,
    ratios: SEEDANCE_RATIOS,
    fps: [SEEDANCE_FPS],
  };
}

/** The create body in Ark's format. */
export function arkCreateBody(upstreamModel: string, req: VideoGenerationRequest, callbackUrl?: string): Record<string, unknown> {
  const content: Record<string, unknown>[] = [];
  if (req.prompt) content.push({ type: 'text', text: req.prompt });
  for (const img of req.images) content.push({ type: 'image_url', image_url: { url: img.url }, role: img.role });
  const body: Record<string, unknown> = { model: upstreamModel, content };
  for (const [k, v] of Object.entries(req.metadata)) if (!RESERVED.has(k)) body[k] = v;
  for (const [k, v] of Object.entries(req.params)) if (v !== undefined) body[k === 'fps' ? 'framespersecond' : k] = v;
  if (callbackUrl) body.callback_url = callbackUrl;
  return body;
}

/**
 * The video tokens a request will probably cost. Absent values take the largest default
 * (1080p: Seedance 1.0 pro's default), 16:9 and 5 s; a duration or frame count passed in metadata counts.
 */
function estimate(_model: string, req: VideoGenerationRequest): BillableUnits {
  const { params, metadata } = req;
  const metaStr = (k: string) => (typeof metadata[k] === 'string' ? (metadata[k] as string) : undefined);
  const metaNum = (k: string) => (typeof metadata[k] === 'number' && Number.isFinite(metadata[k]) && (metadata[k] as number) > 0 ? (metadata[k] as number) : undefined);
  const frames = metaNum('frames');
  const seconds = Math.min(params.duration ?? metaNum('duration') ?? (frames ? Math.ceil(frames / SEEDANCE_FPS) : undefined) ?? 5, 60);
  const resolution = params.resolution ?? metaStr('resolution') ?? '1080p';
  return { unit: 'tokens', units: videoTokens(resolution, params.ratio ?? metaStr('ratio') ?? '16:9', seconds), resolution };
}

async function send(call: VideoCall, target: Target, method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<Record<string, unknown>> {
  const res = await call.upstream.send({
    url: arkUrl(target, path),
    method,
    headers: arkHeaders(target),
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: call.signal,
  });
  if (res.statusCode < 200 || res.statusCode >= 300) throw await arkFailure(res);
  const json = await readJsonBody(res, call.signal);
  if (!json || typeof json !== 'object' || Array.isArray(json)) throw new UpstreamFailure('malformed', 'the upstream answered with a JSON value that is not an object', res.statusCode);
  return json as Record<string, unknown>;
}

const obj = (v: unknown) => (v && typeof v === 'object' ? v : {}) as Record<string, unknown>;

export const arkVideos: VideoAdapter = {
  caps: seedanceCaps,

  // The usual sizes of each resolution and ratio, and the pixel sizes Seedance renders (1248x704 …).
  sizes: (model) =>
    uniqueSizes([
      ...sizesFromCaps(seedanceCaps(model)),
      ...Object.entries(SEEDANCE_SIZES).flatMap(([resolution, byRatio]) => Object.entries(byRatio).map(([ratio, [w, h]]) => ({ size: `${w}x${h}`, resolution, ratio }))),
    ]),

  validate(_model, req) {
    refuseReserved(req, REFUSED_IN_METADATA);
    const tier = req.params.service_tier;
    if (tier !== undefined && !SERVICE_TIERS.includes(tier)) throw errors.invalidRequest(`service_tier must be one of ${SERVICE_TIERS.join(', ')}.`, 'service_tier');
  },

  estimate,

  expiresAfterS: (req) => req.params.execution_expires_after ?? ARK_DEFAULT_EXPIRES_S,

  acceptsCallback: true,

  async create(call, target, req, opts = {}) {
    const out = await send(call, target, 'POST', TASKS, arkCreateBody(target.upstreamModel, req, opts.callbackUrl));
    if (typeof out.id !== 'string' || !out.id) throw new UpstreamFailure('malformed', 'the upstream accepted the task without returning its id', 200);
    return { upstreamId: out.id, raw: out };
  },

  get(call, target, upstreamId) {
    return send(call, target, 'GET', `${TASKS}/${encodeURIComponent(upstreamId)}`);
  },

  getManyMax: ARK_LIST_IDS,

  async getMany(call, target, upstreamIds) {
    const q = new URLSearchParams({ page_num: '1', page_size: String(Math.min(500, Math.max(1, upstreamIds.length))) });
    for (const id of upstreamIds) q.append('filter.task_ids', id);
    const out = await send(call, target, 'GET', `${TASKS}?${q.toString()}`);
    if (!Array.isArray(out.items)) throw new UpstreamFailure('malformed', 'the Ark task list has no items array', 200);
    const wanted = new Set(upstreamIds);
    const found = new Map<string, Record<string, unknown>>();
    for (const item of out.items as unknown[]) {
      const task = item as Record<string, unknown> | null;
      if (task && typeof task === 'object' && typeof task.id === 'string' && wanted.has(task.id)) found.set(task.id, task);
    }
    return found;
  },

  view(task, now = Date.now()) {
    const status = typeof task.status === 'string' ? task.status : '';
    const error = obj(task.error);
    const content = obj(task.content);
    const usage = obj(task.usage);
    const tokens = usageCount(usage.total_tokens) ?? usageCount(usage.completion_tokens);
    const updatedAtS = typeof task.updated_at === 'number' ? task.updated_at : 0;
    const url = typeof content.video_url === 'string' ? content.video_url : '';
    return {
      state: (ARK_TASK_STATUSES as readonly string[]).includes(status) ? (status as ProviderTaskState) : 'unknown',
      rawStatus: status,
      result: url ? { kind: 'url', url, expiresAtS: Math.floor(signedUrlExpiry(url, updatedAtS, now).expiresAt / 1000) } : null,
      errorCode: typeof error.code === 'string' ? error.code : '',
      errorMessage: typeof error.message === 'string' ? error.message : '',
      progress: null,
      usage: tokens !== null ? { unit: 'tokens', units: tokens } : null,
      updatedAtS,
    };
  },

  // Ark cancels a queued task on DELETE; a running one it refuses (and a finished one it deletes,
  // which is why callers cancel only tasks they still consider open).
  async cancel(call, target, upstreamId) {
    try {
      await send(call, target, 'DELETE', `${TASKS}/${encodeURIComponent(upstreamId)}`);
      return { accepted: true, message: '' };
    } catch (err) {
      if (err instanceof UpstreamFailure && err.kind === 'status' && err.status >= 400 && err.status < 500 && err.status !== 429) return { accepted: false, message: err.message };
      throw err;
    }
  },
};

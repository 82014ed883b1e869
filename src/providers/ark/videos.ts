import type { Target } from '../../upstream/target.js';
import { UpstreamFailure } from '../../upstream/failure.js';
import { readJsonBody } from '../../upstream/json.js';
import { usageCount } from '../../upstream/usage-number.js';
import type { ProviderTaskState, ProviderTaskView, VideoAdapter, VideoCall, VideoGenerationRequest } from '../videos.js';
import { arkFailure, arkHeaders, arkUrl } from './api.js';

// Ark content generation tasks (Seedance):
//   POST /api/v3/contents/generations/tasks       {model, content[], <params>} → {id}
//   GET  /api/v3/contents/generations/tasks/{id}  → the task object
// content[] holds one {type:"text", text} and {type:"image_url", image_url:{url}, role} items;
// generation parameters are top-level fields.

const TASKS = '/contents/generations/tasks';
const STATES: ProviderTaskState[] = ['queued', 'running', 'succeeded', 'failed', 'cancelled', 'expired'];
// Fields the gateway builds itself; metadata cannot replace them.
const RESERVED = new Set(['model', 'content']);

/** The create body in Ark's format. */
export function arkCreateBody(upstreamModel: string, req: VideoGenerationRequest): Record<string, unknown> {
  const content: Record<string, unknown>[] = [];
  if (req.prompt) content.push({ type: 'text', text: req.prompt });
  for (const img of req.images) content.push({ type: 'image_url', image_url: { url: img.url }, role: img.role });
  const body: Record<string, unknown> = { model: upstreamModel, content };
  for (const [k, v] of Object.entries(req.metadata)) if (!RESERVED.has(k)) body[k] = v;
  for (const [k, v] of Object.entries(req.params)) if (v !== undefined) body[k] = v;
  return body;
}

async function send(call: VideoCall, target: Target, method: 'GET' | 'POST', path: string, body?: unknown): Promise<Record<string, unknown>> {
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

export const arkVideos: VideoAdapter = {
  async create(call, target, req) {
    const out = await send(call, target, 'POST', TASKS, arkCreateBody(target.upstreamModel, req));
    if (typeof out.id !== 'string' || !out.id) throw new UpstreamFailure('malformed', 'the upstream accepted the task without returning its id', 200);
    return out as Record<string, unknown> & { id: string };
  },

  get(call, target, taskId) {
    return send(call, target, 'GET', `${TASKS}/${encodeURIComponent(taskId)}`);
  },

  view(task): ProviderTaskView {
    const status = typeof task.status === 'string' ? task.status : '';
    const error = (task.error && typeof task.error === 'object' ? task.error : {}) as Record<string, unknown>;
    const content = (task.content && typeof task.content === 'object' ? task.content : {}) as Record<string, unknown>;
    const usage = (task.usage && typeof task.usage === 'object' ? task.usage : {}) as Record<string, unknown>;
    const tokens = usageCount(usage.total_tokens) ?? usageCount(usage.completion_tokens);
    return {
      state: STATES.includes(status as ProviderTaskState) ? (status as ProviderTaskState) : 'unknown',
      rawStatus: status,
      videoUrl: typeof content.video_url === 'string' ? content.video_url : '',
      errorCode: typeof error.code === 'string' ? error.code : '',
      errorMessage: typeof error.message === 'string' ? error.message : '',
      totalTokens: tokens,
      updatedAtS: typeof task.updated_at === 'number' ? task.updated_at : 0,
    };
  },
};

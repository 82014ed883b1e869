import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { sendJson, readJson, type SimContext, type SimRoute, type SimState } from './router.js';
import { arkError } from './shapes.js';
import { scheduleCallbacks, sendSampleVideo, taskMap } from './video-common.js';
import { SEEDANCE_FPS, SEEDANCE_RATIOS, SEEDANCE_RESOLUTIONS, videoTokens } from '../providers/ark/wire.js';

// The simulator's Volcengine Ark video part: content generation tasks (create, get, list, delete)
// in Ark's wire format, plus the signed, expiring download of the generated MP4.
//
// Timeline of a task over `videoSeconds` (T): queued for the first 20 % of T, running until T,
// then its outcome. Markers in the prompt choose the outcome:
//   [fail]    → failed with error OutputVideoSensitiveContentDetected
//   [cancel]  → cancelled when it leaves the queue (as if cancelled by the account)
//   [expire]  → expired at T (as if execution_expires_after ran out)
//   [stuck]   → running forever (a provider that never finishes; for gateway timeouts)
// A task whose execution_expires_after (seconds) runs out before T also ends `expired`.

type Outcome = 'succeeded' | 'failed' | 'cancelled' | 'expired' | 'stuck';
type ArkStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled' | 'expired';

interface SimVideoTask {
  id: string;
  /** Order of creation (lists answer newest first). */
  seq: number;
  model: string;
  prompt: string;
  roles: string[];
  createdMs: number;
  outcome: Outcome;
  cancelledMs: number | null;
  resolution: string;
  ratio: string;
  duration: number;
  seed: number;
  draft: boolean;
  generateAudio: boolean;
  serviceTier: string;
  executionExpiresAfter: number;
  polls: number;
  lastPollMs: number;
  /** Shortest time between two polls of this task, ms (-1 before the second poll). */
  minGapMs: number;
  /** Where to POST status changes ('' = nowhere). */
  callbackUrl: string;
}

interface ArkVideoPart {
  tasks: Map<string, SimVideoTask>;
  /** Signs download URLs: the simulator's signing secret, else new per simulator. */
  secret: Buffer;
  /** Extra time a task read call takes (POST /__sim/video/config), to observe polling concurrency. */
  getDelayMs: number;
  inflightGets: number;
  maxInflightGets: number;
  /** Task reads so far: a GET of one task, or one task's line in a list by id. */
  reads: number;
  /** Tasks created so far. */
  created: number;
}

const ROLES = ['first_frame', 'last_frame', 'reference_image'];
const FILE_PATH = /^\/__sim\/video\/files\/(cgt-[0-9]{14}-[0-9a-z]{5})\.mp4$/;

function part(state: SimState): ArkVideoPart {
  let p = state.parts.get('ark.video') as ArkVideoPart | undefined;
  if (!p) {
    const tasks = taskMap<SimVideoTask>(state, 'ark.video');
    // Tasks kept from before a restart go on counting from where they were.
    const created = Math.max(0, ...[...tasks.values()].map((t) => t.seq));
    p = { tasks, secret: state.options.signingSecret ?? randomBytes(32), getDelayMs: 0, inflightGets: 0, maxInflightGets: 0, reads: 0, created };
    state.parts.set('ark.video', p);
  }
  return p;
}

const seconds = (ms: number) => Math.floor(ms / 1000);

/** `cgt-<UTC yyyymmddhhmmss>-<5 base36>`, like cgt-20250331175019-68d9t. */
function newTaskId(tasks: Map<string, SimVideoTask>, now: number): string {
  const stamp = new Date(now).toISOString().replace(/[-:T]/g, '').slice(0, 14);
  for (;;) {
    const suffix = Array.from(randomBytes(5), (b) => '0123456789abcdefghijklmnopqrstuvwxyz'[b % 36]).join('');
    const id = `cgt-${stamp}-${suffix}`;
    if (!tasks.has(id)) return id;
  }
}

/** Where the task is at `now`, and since when (ms). */
function statusAt(t: SimVideoTask, totalMs: number, now: number): { status: ArkStatus; since: number } {
  const queueEnd = t.createdMs + Math.round(totalMs * 0.2);
  const finish = t.createdMs + totalMs;
  const expiry = t.createdMs + t.executionExpiresAfter * 1000;
  if (t.cancelledMs !== null) return { status: 'cancelled', since: t.cancelledMs };
  if (t.outcome === 'cancelled' && now >= queueEnd) return { status: 'cancelled', since: queueEnd };
  if (t.outcome !== 'stuck' && expiry < finish && now >= expiry) return { status: 'expired', since: expiry };
  if (now < queueEnd) return { status: 'queued', since: t.createdMs };
  if (now < finish || t.outcome === 'stuck') return { status: 'running', since: queueEnd };
  return { status: t.outcome as ArkStatus, since: finish };
}

function tosDate(ms: number): string {
  return new Date(ms).toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
}

function signature(secret: Buffer, path: string, date: string, expires: string): string {
  return createHmac('sha256', secret).update(`${path}\n${date}\n${expires}`).digest('hex');
}

/** A download URL signed now, valid `ttlS` seconds, in TOS pre-signed URL style. */
function signedVideoUrl(state: SimState, id: string, now: number): string {
  const path = `/__sim/video/files/${id}.mp4`;
  const date = tosDate(now);
  const expires = String(state.options.urlTtlS);
  const q = new URLSearchParams({
    'X-Tos-Algorithm': 'TOS4-HMAC-SHA256',
    'X-Tos-Credential': `simulator/${date.slice(0, 8)}/cn-beijing/tos/request`,
    'X-Tos-Date': date,
    'X-Tos-Expires': expires,
    'X-Tos-SignedHeaders': 'host',
  });
  q.set('X-Tos-Signature', signature(part(state).secret, path, date, expires));
  return `${state.baseUrl}${path}?${q.toString()}`;
}

/** The task object exactly as Ark's GET …/tasks/{id} answers it. */
function taskObject(state: SimState, t: SimVideoTask, now: number): Record<string, unknown> {
  const { status, since } = statusAt(t, state.options.videoSeconds * 1000, now);
  const out: Record<string, unknown> = { id: t.id, model: t.model, status, error: null };
  if (status === 'failed') {
    out.error = { code: 'OutputVideoSensitiveContentDetected', message: 'The request failed because the output video may contain sensitive information.' };
  }
  if (status === 'succeeded') {
    const tokens = videoTokens(t.resolution, t.ratio, t.duration, SEEDANCE_FPS);
    out.content = { video_url: signedVideoUrl(state, t.id, now) };
    out.usage = { completion_tokens: tokens, total_tokens: tokens };
  }
  Object.assign(out, {
    created_at: seconds(t.createdMs),
    updated_at: seconds(since),
    seed: t.seed,
    resolution: t.resolution,
    ratio: t.ratio,
    duration: t.duration,
    framespersecond: SEEDANCE_FPS,
    generate_audio: t.generateAudio,
    draft: t.draft,
    service_tier: t.serviceTier,
    execution_expires_after: t.executionExpiresAfter,
  });
  return out;
}

/** Answers 400 in Ark's shape; returns undefined so a parser can `return badRequest(…)`. */
function badRequest(ctx: SimContext, message: string, code = 'InvalidParameter', param = ''): undefined {
  const body = arkError(message, code) as { error: Record<string, unknown> };
  body.error.param = param;
  sendJson(ctx.res, 400, body);
  return undefined;
}

function errorFor(status: number, message: string): unknown {
  if (status === 429) return arkError(message, 'RateLimitExceeded.EndpointRPMExceeded', 'TooManyRequests');
  if (status === 401) return arkError(message, 'AuthenticationError', 'Unauthorized');
  if (status === 403) return arkError(message, 'AccessDenied', 'Forbidden');
  if (status === 404) return arkError(message, 'ResourceNotFound', 'NotFound');
  if (status >= 500) return arkError(message, 'InternalServiceError', 'InternalServiceError');
  return arkError(message, 'InvalidParameter', 'BadRequest');
}

/** Reads and checks a create body; answers 400 itself and returns undefined when it is invalid. */
function parseCreate(ctx: SimContext, now: number): Omit<SimVideoTask, 'id' | 'seq'> | undefined {
  const body = readJson(ctx, (m) => arkError(m, 'InvalidParameter'));
  if (!body) return undefined;
  if (typeof body.model !== 'string' || !body.model) return badRequest(ctx, 'The parameter `model` specified in the request is missing.', 'MissingParameter', 'model');
  if (!Array.isArray(body.content) || body.content.length === 0) {
    return badRequest(ctx, 'The parameter `content` specified in the request is missing.', 'MissingParameter', 'content');
  }
  let prompt = '';
  const roles: (string | undefined)[] = [];
  for (const item of body.content as unknown[]) {
    const it = item as Record<string, any> | null;
    if (it?.type === 'text' && typeof it.text === 'string') prompt += (prompt ? '\n' : '') + it.text;
    else if (it?.type === 'image_url' && typeof it.image_url?.url === 'string' && /^(https?:\/\/|data:image\/)/.test(it.image_url.url)) {
      if (it.role !== undefined && !ROLES.includes(it.role)) return badRequest(ctx, `The parameter \`content.role\` has an invalid value "${String(it.role)}".`, 'InvalidParameter', 'content.role');
      roles.push(it.role);
    } else return badRequest(ctx, 'Each content item must be {"type":"text","text"} or {"type":"image_url","image_url":{"url"}}.', 'InvalidParameter', 'content');
  }
  if (!prompt && roles.length === 0) return badRequest(ctx, 'The request needs a text prompt or an image.', 'MissingParameter', 'content');
  const sorted = roles.map((r) => r ?? 'first_frame').sort().join(',');
  const validRoles =
    roles.length === 0 ||
    (roles.length === 1 && (roles[0] === undefined || roles[0] === 'first_frame' || roles[0] === 'reference_image')) ||
    (roles.length === 2 && roles.every((r) => r !== undefined) && sorted === 'first_frame,last_frame') ||
    (roles.length <= 4 && roles.every((r) => r === 'reference_image'));
  if (!validRoles) return badRequest(ctx, 'First-frame, first-and-last-frame and reference-image inputs cannot be mixed.', 'InvalidParameter', 'content.role');

  const str = (k: string, allowed: string[], dflt: string) => {
    const v = body[k];
    if (v === undefined) return dflt;
    if (typeof v !== 'string' || !allowed.includes(v)) throw new SimBadParam(k);
    return v;
  };
  const int = (k: string, min: number, max: number, dflt: number) => {
    const v = body[k];
    if (v === undefined) return dflt;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) throw new SimBadParam(k);
    return v;
  };
  const bool = (k: string, dflt: boolean) => {
    const v = body[k];
    if (v === undefined) return dflt;
    if (typeof v !== 'boolean') throw new SimBadParam(k);
    return v;
  };
  try {
    const seed = int('seed', -1, 2 ** 32 - 1, -1);
    const callbackUrl = body.callback_url;
    if (callbackUrl !== undefined && (typeof callbackUrl !== 'string' || !/^https?:\/\//.test(callbackUrl))) throw new SimBadParam('callback_url');
    const ratio = str('ratio', SEEDANCE_RATIOS, '16:9');
    for (const k of ['camera_fixed', 'watermark', 'return_last_frame']) bool(k, false);
    return {
      model: body.model,
      prompt,
      roles: roles.map((r) => r ?? 'first_frame'),
      createdMs: now,
      outcome: prompt.includes('[fail]') ? 'failed' : prompt.includes('[cancel]') ? 'cancelled' : prompt.includes('[expire]') ? 'expired' : prompt.includes('[stuck]') ? 'stuck' : 'succeeded',
      cancelledMs: null,
      resolution: str('resolution', SEEDANCE_RESOLUTIONS, '720p'),
      // Like Ark, the task reports the ratio it produced; adaptive choices come out 16:9 here.
      ratio: ratio === 'adaptive' || ratio === 'keep_ratio' ? '16:9' : ratio,
      duration: int('duration', 2, 12, 5),
      seed: seed === -1 ? Math.floor(Math.random() * 2 ** 31) : seed,
      draft: bool('draft', false),
      generateAudio: bool('generate_audio', false),
      serviceTier: str('service_tier', ['default', 'flex'], 'default'),
      // Ark accepts 3600–259200; the simulator accepts from 1 s so tests can reach expiry quickly.
      executionExpiresAfter: int('execution_expires_after', 1, 259200, 172800),
      polls: 0,
      lastPollMs: 0,
      minGapMs: -1,
      callbackUrl: typeof callbackUrl === 'string' ? callbackUrl : '',
    };
  } catch (err) {
    if (!(err instanceof SimBadParam)) throw err;
    return badRequest(ctx, `The parameter \`${err.param}\` specified in the request is not valid.`, 'InvalidParameter', err.param);
  }
}

class SimBadParam extends Error {
  constructor(readonly param: string) {
    super(param);
  }
}

/** One read of a task (a GET of it, or its line in a list by id): its poll count and shortest gap. */
function countRead(p: ArkVideoPart, t: SimVideoTask, now: number): void {
  p.reads += 1;
  t.polls += 1;
  if (t.lastPollMs) t.minGapMs = t.minGapMs < 0 ? now - t.lastPollMs : Math.min(t.minGapMs, now - t.lastPollMs);
  t.lastPollMs = now;
}

/** The configured extra time of a read call (get, or list by id), counted as one read in flight. */
async function delayedRead(p: ArkVideoPart): Promise<void> {
  p.inflightGets += 1;
  p.maxInflightGets = Math.max(p.maxInflightGets, p.inflightGets);
  await new Promise((r) => setTimeout(r, p.getDelayMs));
  p.inflightGets -= 1;
}

function notFound(ctx: SimContext, id: string): void {
  sendJson(ctx.res, 404, arkError(`The specified task ${id} is not found.`, 'ResourceNotFound', 'NotFound'));
}

function serveVideo(ctx: SimContext): void {
  const path = ctx.url.pathname;
  const id = FILE_PATH.exec(path)?.[1] ?? '';
  const q = ctx.url.searchParams;
  const date = q.get('X-Tos-Date') ?? '';
  const expires = q.get('X-Tos-Expires') ?? '';
  const given = Buffer.from(q.get('X-Tos-Signature') ?? '', 'utf8');
  const want = Buffer.from(signature(part(ctx.state).secret, path, date, expires), 'utf8');
  const deny = (message: string) => sendJson(ctx.res, 403, { Code: 'AccessDenied', Message: message, RequestId: `sim${Date.now()}` });
  if (given.length !== want.length || !timingSafeEqual(given, want)) return deny('The request signature does not match.');
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(date);
  const signedAt = m ? Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6]) : NaN;
  if (!Number.isFinite(signedAt) || Date.now() >= signedAt + Number(expires) * 1000) return deny('Request has expired.');
  // A valid signature proves this simulator (or its predecessor, holding the same secret) minted the
  // URL for a finished task, so the file is served even when the task is from before a restart.
  if (!id) return sendJson(ctx.res, 404, { Code: 'NoSuchKey', Message: 'The specified key does not exist.' });
  sendSampleVideo(ctx);
}

export function arkVideoRoutes(): SimRoute[] {
  return [
    {
      name: 'ark.video.create',
      method: 'POST',
      pattern: /^\/api\/v3\/contents\/generations\/tasks$/,
      auth: true,
      errorBody: errorFor,
      handle(ctx) {
        const now = Date.now();
        const parsed = parseCreate(ctx, now);
        if (!parsed) return;
        const p = part(ctx.state);
        const id = newTaskId(p.tasks, now);
        const task = { id, seq: ++p.created, ...parsed };
        p.tasks.set(id, task);
        sendJson(ctx.res, 200, { id });
        // Ark POSTs the task object, as GET answers it, to callback_url when its status changes.
        if (parsed.callbackUrl) {
          const totalMs = ctx.state.options.videoSeconds * 1000;
          const at = [now + Math.round(totalMs * 0.2), now + totalMs, now + task.executionExpiresAfter * 1000].filter((t) => t - now < 86_400_000);
          scheduleCallbacks(ctx.state, 'ark.video.callback', parsed.callbackUrl, at, (t) => {
            const body = taskObject(ctx.state, task, t);
            return { status: String(body.status), body };
          });
        }
      },
    },
    {
      name: 'ark.video.get',
      method: 'GET',
      pattern: /^\/api\/v3\/contents\/generations\/tasks\/([^/]+)$/,
      auth: true,
      errorBody: errorFor,
      async handle(ctx) {
        const p = part(ctx.state);
        const id = decodeURIComponent(ctx.params[0]);
        const t = p.tasks.get(id);
        if (!t) return notFound(ctx, id);
        countRead(p, t, Date.now());
        if (p.getDelayMs > 0) await delayedRead(p);
        sendJson(ctx.res, 200, taskObject(ctx.state, t, Date.now()));
      },
    },
    {
      name: 'ark.video.list',
      method: 'GET',
      pattern: /^\/api\/v3\/contents\/generations\/tasks$/,
      auth: true,
      errorBody: errorFor,
      async handle(ctx) {
        const q = ctx.url.searchParams;
        const pageNum = Math.max(1, Number(q.get('page_num') ?? 1) || 1);
        const pageSize = Math.min(500, Math.max(1, Number(q.get('page_size') ?? 10) || 10));
        const ids = q.getAll('filter.task_ids');
        const p = part(ctx.state);
        const now = Date.now();
        // By id: each id is looked up (never a scan of every task); newest first, like the full list.
        const picked = ids.length
          ? [...new Set(ids)].flatMap((id) => p.tasks.get(id) ?? []).sort((a, b) => b.seq - a.seq)
          : [...p.tasks.values()].reverse();
        const status = q.get('filter.status');
        const model = q.get('filter.model');
        const items = picked
          .filter((t) => !model || t.model === model)
          .map((t) => ({ t, o: taskObject(ctx.state, t, now) }))
          .filter(({ o }) => !status || o.status === status);
        const page = items.slice((pageNum - 1) * pageSize, pageNum * pageSize);
        // A list by id is how a poller reads many tasks at once: each task listed counts as a read of it.
        if (ids.length) for (const { t } of page) countRead(p, t, now);
        if (ids.length && p.getDelayMs > 0) await delayedRead(p);
        sendJson(ctx.res, 200, { total: items.length, items: page.map(({ o }) => o) });
      },
    },
    {
      name: 'ark.video.delete',
      method: 'DELETE',
      pattern: /^\/api\/v3\/contents\/generations\/tasks\/([^/]+)$/,
      auth: true,
      errorBody: errorFor,
      handle(ctx) {
        const p = part(ctx.state);
        const id = decodeURIComponent(ctx.params[0]);
        const t = p.tasks.get(id);
        if (!t) return notFound(ctx, id);
        const now = Date.now();
        const { status } = statusAt(t, ctx.state.options.videoSeconds * 1000, now);
        if (status === 'running') return badRequest(ctx, 'Only a queued task can be cancelled.', 'InvalidParameter', 'id');
        if (status === 'queued') {
          t.cancelledMs = now;
          // Set again, so the change is saved.
          p.tasks.set(id, t);
        } else p.tasks.delete(id);
        sendJson(ctx.res, 200, {});
      },
    },
    { name: 'ark.video.file', method: 'GET', pattern: FILE_PATH, auth: false, faults: true, handle: serveVideo },
    { name: 'ark.video.file', method: 'HEAD', pattern: FILE_PATH, auth: false, handle: serveVideo },
    {
      name: 'control.video.stats',
      method: 'GET',
      pattern: /^\/__sim\/video\/stats$/,
      auth: false,
      handle(ctx) {
        const p = part(ctx.state);
        const now = Date.now();
        const tasks: Record<string, unknown> = {};
        for (const t of p.tasks.values()) {
          tasks[t.id] = {
            status: statusAt(t, ctx.state.options.videoSeconds * 1000, now).status,
            model: t.model,
            roles: t.roles,
            polls: t.polls,
            min_gap_ms: t.minGapMs,
          };
        }
        sendJson(ctx.res, 200, { tasks, max_inflight_gets: p.maxInflightGets, task_reads: p.reads });
      },
    },
    {
      name: 'control.video.config',
      method: 'POST',
      pattern: /^\/__sim\/video\/config$/,
      auth: false,
      handle(ctx) {
        const body = readJson(ctx, (m) => ({ error: m }));
        if (!body) return;
        const p = part(ctx.state);
        if (body.get_delay_ms !== undefined) {
          const ms = Number(body.get_delay_ms);
          if (!Number.isFinite(ms) || ms < 0) return sendJson(ctx.res, 400, { error: 'get_delay_ms must be a non-negative number' });
          p.getDelayMs = ms;
        }
        if (body.url_ttl_s !== undefined) {
          const s = Number(body.url_ttl_s);
          if (!Number.isInteger(s) || s < 1) return sendJson(ctx.res, 400, { error: 'url_ttl_s must be a positive integer' });
          ctx.state.options.urlTtlS = s;
        }
        if (body.video_seconds !== undefined) {
          const s = Number(body.video_seconds);
          if (!Number.isFinite(s) || s < 0) return sendJson(ctx.res, 400, { error: 'video_seconds must be a non-negative number' });
          ctx.state.options.videoSeconds = s;
        }
        p.maxInflightGets = p.inflightGets;
        sendJson(ctx.res, 200, { get_delay_ms: p.getDelayMs, url_ttl_s: ctx.state.options.urlTtlS, video_seconds: ctx.state.options.videoSeconds });
      },
    },
  ];
}

import { RUNWAY_MODELS, RUNWAY_VERSION } from '../providers/runway/wire.js';
import { readJson, sendJson, type SimContext, type SimRoute, type SimState } from './router.js';
import { ossSignedUrl, outcomeOf, partState, phaseAt, progressAt, serveSignedVideo, taskMap, uuid, videoSecret, type SimOutcome } from './video-common.js';

// The simulator's Runway part, in Runway's wire format (docs.dev.runwayml.com, the official SDKs):
//   POST /v1/text_to_video | /v1/image_to_video → {id}
//   GET  /v1/tasks/{id}    → {id, status, createdAt, progress?, output?, failure?, failureCode?}
//   DELETE /v1/tasks/{id}  → 204; an open task ends CANCELLED, a finished one is deleted (404 after)
//   GET  /v1/organization  → {tier, creditBalance, usage}
// Every call needs `Authorization: Bearer <key>` and `X-Runway-Version` (a key holding "revoked"
// stands for a disabled key). Errors are {"error": "…"} with the HTTP status. Outcome markers in
// the prompt are those of video-common.ts: [fail] ends FAILED (INTERNAL.BAD_OUTPUT.CODE01),
// [moderation] FAILED (SAFETY.OUTPUT.VIDEO), [cancel] CANCELLED; Runway has no expired state, so
// [expire] ends FAILED. output[] are signed links that expire within a day.

const FILE = /^\/__sim\/runway\/outputs\/([0-9a-f-]+)\.mp4$/;

interface RunwayTask {
  id: string;
  model: string;
  prompt: string;
  duration: number;
  createdMs: number;
  outcome: SimOutcome;
  cancelledMs: number | null;
  deleted: boolean;
}

const part = (state: SimState) => partState(state, 'runway.video', () => ({ tasks: taskMap<RunwayTask>(state, 'runway.video') }));

const error = (ctx: SimContext, status: number, message: string): undefined => {
  sendJson(ctx.res, status, { error: message });
  return undefined;
};

function authenticate(ctx: SimContext): boolean {
  const m = /^Bearer (\S+)$/.exec(String(ctx.req.headers.authorization ?? ''));
  const version = String(ctx.req.headers['x-runway-version'] ?? '');
  if (!m || m[1].includes('revoked')) error(ctx, 401, 'Incorrect or missing API key.');
  else if (version !== RUNWAY_VERSION) error(ctx, 400, version ? `Invalid API version "${version}". Valid versions: ${RUNWAY_VERSION}.` : 'The X-Runway-Version header is required.');
  else return true;
  return false;
}

const isAsset = (v: unknown) => typeof v === 'string' && /^(https:\/\/|data:image\/(png|jpeg|jpg|webp);base64,)/.test(v);

function parseCreate(ctx: SimContext, endpoint: 'text_to_video' | 'image_to_video'): Omit<RunwayTask, 'id'> | undefined {
  const body = readJson(ctx, () => ({ error: 'Invalid JSON body.' }));
  if (!body) return undefined;
  const model = typeof body.model === 'string' ? body.model : '';
  const spec = RUNWAY_MODELS[model];
  const takes = Object.keys(RUNWAY_MODELS).filter((k) => endpoint === 'image_to_video' || RUNWAY_MODELS[k].text);
  if (!spec || !takes.includes(model)) return error(ctx, 400, `Validation of body failed: model: Invalid enum value. Expected ${takes.map((k) => `'${k}'`).join(' | ')}`);
  const prompt = body.promptText ?? '';
  if (typeof prompt !== 'string' || prompt.length > 1000) return error(ctx, 400, 'Validation of body failed: promptText: String must contain at most 1000 character(s)');
  if (endpoint === 'text_to_video' && !prompt) return error(ctx, 400, 'Validation of body failed: promptText: Required');
  if (endpoint === 'image_to_video') {
    const img = body.promptImage;
    const list = typeof img === 'string' ? [{ uri: img, position: 'first' }] : Array.isArray(img) ? (img as { uri?: unknown; position?: unknown }[]) : [];
    if (!list.length) return error(ctx, 400, 'Validation of body failed: promptImage: Required');
    const positions = list.map((i) => i?.position);
    if (!list.every((i) => isAsset(i?.uri))) return error(ctx, 400, 'Validation of body failed: promptImage: Only HTTPS URLs or data URIs of an image are allowed.');
    if (positions[0] !== 'first' || positions.length > 2 || (positions.length === 2 && positions[1] !== 'last')) return error(ctx, 400, 'Validation of body failed: promptImage: A first frame, optionally followed by a last frame.');
    if (positions.includes('last') && !spec.lastFrame) return error(ctx, 400, `Validation of body failed: promptImage: position "last" is not supported by ${model}.`);
  }
  const ratios = endpoint === 'text_to_video' ? spec.textRatios : spec.imageRatios;
  if (typeof body.ratio !== 'string' || !ratios.includes(body.ratio)) return error(ctx, 400, `Validation of body failed: ratio: Invalid enum value. Expected ${ratios.map((r) => `'${r}'`).join(' | ')}`);
  if (body.duration === undefined && !spec.durationOptional) return error(ctx, 400, 'Validation of body failed: duration: Required');
  const duration = body.duration ?? spec.durations[spec.durations.length - 1];
  if (typeof duration !== 'number' || !spec.durations.includes(duration)) return error(ctx, 400, `Validation of body failed: duration: must be one of ${spec.durations.join(', ')}`);
  if (body.seed !== undefined && (typeof body.seed !== 'number' || !Number.isInteger(body.seed) || body.seed < 0 || body.seed > 4294967295)) return error(ctx, 400, 'Validation of body failed: seed: Number must be an integer from 0 to 4294967295');
  return { model, prompt, duration, createdMs: Date.now(), outcome: outcomeOf(prompt), cancelledMs: null, deleted: false };
}

const FAILURE: Partial<Record<SimOutcome, [string, string]>> = {
  failed: ['INTERNAL.BAD_OUTPUT.CODE01', 'An unexpected error occurred while generating the output.'],
  moderated: ['SAFETY.OUTPUT.VIDEO', 'The output did not pass content moderation.'],
  expired: ['INTERNAL', 'The task could not be completed.'],
};

/** The task as GET /v1/tasks/{id} answers it. */
function taskObject(state: SimState, t: RunwayTask, now: number): Record<string, unknown> {
  const totalMs = state.options.videoSeconds * 1000;
  const { phase } = phaseAt(t.createdMs, t.outcome, totalMs, now, t.cancelledMs);
  const base = { id: t.id, createdAt: new Date(t.createdMs).toISOString() };
  if (phase === 'queued') return { ...base, status: 'PENDING' };
  if (phase === 'cancelled') return { ...base, status: 'CANCELLED' };
  if (phase === 'running') return { ...base, status: 'RUNNING', progress: progressAt(t.createdMs, totalMs, now) / 100 };
  const failure = t.outcome === 'succeeded' ? undefined : FAILURE[t.outcome];
  if (failure) return { ...base, status: 'FAILED', failure: failure[1], failureCode: failure[0] };
  return { ...base, status: 'SUCCEEDED', output: [ossSignedUrl(state, videoSecret(state), `/__sim/runway/outputs/${t.id}.mp4`, Math.min(86_400, state.options.urlTtlS), now)] };
}

function errorFor(status: number, message: string): unknown {
  if (status === 429) return { error: 'You have exceeded the rate limit.' };
  if (status === 401) return { error: 'Incorrect or missing API key.' };
  return { error: status >= 500 ? `Runway is temporarily unavailable (${message}).` : message };
}

const serveFile = (ctx: SimContext) => serveSignedVideo(ctx, videoSecret(ctx.state), FILE, () => true);

function createRoute(endpoint: 'text_to_video' | 'image_to_video'): SimRoute {
  return {
    name: 'runway.video.create',
    method: 'POST',
    pattern: new RegExp(`^/v1/${endpoint}$`),
    auth: true,
    authenticate,
    errorBody: errorFor,
    handle(ctx) {
      const parsed = parseCreate(ctx, endpoint);
      if (!parsed) return;
      const t: RunwayTask = { id: uuid(), ...parsed };
      part(ctx.state).tasks.set(t.id, t);
      sendJson(ctx.res, 200, { id: t.id });
    },
  };
}

const known = (ctx: SimContext) => {
  const t = part(ctx.state).tasks.get(ctx.params[0]);
  return t && !t.deleted ? t : undefined;
};

export function runwayVideoRoutes(): SimRoute[] {
  return [
    createRoute('text_to_video'),
    createRoute('image_to_video'),
    {
      name: 'runway.video.get',
      method: 'GET',
      pattern: /^\/v1\/tasks\/([0-9a-f-]{36})$/,
      auth: true,
      authenticate,
      errorBody: errorFor,
      handle(ctx) {
        const t = known(ctx);
        if (!t) return void error(ctx, 404, 'Task not found.');
        sendJson(ctx.res, 200, taskObject(ctx.state, t, Date.now()));
      },
    },
    {
      name: 'runway.video.cancel',
      method: 'DELETE',
      pattern: /^\/v1\/tasks\/([0-9a-f-]{36})$/,
      auth: true,
      authenticate,
      errorBody: errorFor,
      handle(ctx) {
        const t = known(ctx);
        if (!t) return void error(ctx, 404, 'Task not found.');
        const now = Date.now();
        const status = taskObject(ctx.state, t, now).status;
        // An open task is cancelled; a finished one is deleted and reads no more.
        if (status === 'PENDING' || status === 'RUNNING') t.cancelledMs = now;
        else t.deleted = true;
        part(ctx.state).tasks.set(t.id, t);
        ctx.res.writeHead(204);
        ctx.res.end();
      },
    },
    {
      // GET /v1/organization: the organization's tier, credit balance and today's generations. The
      // simulated organization starts with 5,000 credits; each task created spends 10 per second.
      name: 'runway.organization',
      method: 'GET',
      pattern: /^\/v1\/organization$/,
      auth: true,
      authenticate,
      errorBody: errorFor,
      handle(ctx) {
        if (ctx.url.search) return void error(ctx, 400, 'Validation of query failed: this endpoint takes no query parameters');
        const tasks = [...part(ctx.state).tasks.values()];
        const daily: Record<string, { dailyGenerations: number }> = {};
        const dayStart = new Date().setUTCHours(0, 0, 0, 0);
        for (const t of tasks) if (t.createdMs >= dayStart) daily[t.model] = { dailyGenerations: (daily[t.model]?.dailyGenerations ?? 0) + 1 };
        const spent = tasks.reduce((sum, t) => sum + t.duration * 10, 0);
        const models = Object.fromEntries(Object.keys(RUNWAY_MODELS).map((m) => [m, { maxConcurrentGenerations: 2, maxDailyGenerations: 200 }]));
        sendJson(ctx.res, 200, { tier: { maxMonthlyCreditSpend: 10000, models }, creditBalance: Math.max(0, 5000 - spent), usage: { models: daily } });
      },
    },
    { name: 'runway.video.file', method: 'GET', pattern: FILE, auth: false, handle: serveFile },
    { name: 'runway.video.file', method: 'HEAD', pattern: FILE, auth: false, handle: serveFile },
  ];
}

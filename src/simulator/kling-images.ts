import type { IncomingMessage } from 'node:http';
import { KLING_IMAGE_AREA, KLING_IMAGE_MAX_N, KLING_IMAGE_MODELS, KLING_IMAGE_RATIOS } from '../providers/kling/wire.js';
import { sendJson, readJson, type SimContext, type SimRoute, type SimState } from './router.js';
import { authenticate, errorFor, klingError, requestId } from './kling-video.js';
import { newId, outcomeOf, partState, phaseAt, taskMap, type SimOutcome } from './video-common.js';
import { drawPictures, imageInput, imageTaskMs, ratioOf, rawBase64Image, sizeForRatio } from './image-common.js';
import { fileUrl } from './images.js';

// The simulator's Kling image part, in Kling's wire format (same account and JWT as its video part):
//   POST /v1/images/generations        → {code:0, message, request_id, data:{task_id, task_status:"submitted", …}}
//   GET  /v1/images/generations/{id}   → the task; when `succeed`, task_result.images[{index, url}]
// OpenAI's Images API has the same POST path on this one origin: a request whose bearer token is a
// JWT (three base64url parts) is Kling's. Outcome markers in the prompt are those of video-common.ts.

interface KlingImageTask {
  id: string;
  model: string;
  prompt: string;
  n: number;
  width: number;
  height: number;
  seed: number;
  externalTaskId: string;
  createdMs: number;
  outcome: SimOutcome;
}

const part = (state: SimState) => partState(state, 'kling.images', () => ({ tasks: taskMap<KlingImageTask>(state, 'kling.images') }));

const isJwtBearer = (req: IncomingMessage) => /^Bearer [A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(String(req.headers.authorization ?? ''));

function invalid(ctx: SimContext, message: string): undefined {
  sendJson(ctx.res, 400, klingError(1201, message));
  return undefined;
}

function parseCreate(ctx: SimContext): Omit<KlingImageTask, 'id'> | undefined {
  const body = readJson(ctx, (m) => klingError(1200, m));
  if (!body) return undefined;
  const model = body.model_name ?? 'kling-v1';
  if (typeof model !== 'string' || !KLING_IMAGE_MODELS[model]) return invalid(ctx, `model_name is invalid, must be one of ${Object.keys(KLING_IMAGE_MODELS).join(', ')}`);
  const spec = KLING_IMAGE_MODELS[model];
  const prompt = body.prompt;
  if (typeof prompt !== 'string' || !prompt.trim()) return invalid(ctx, 'prompt is required');
  if (prompt.length > 2500) return invalid(ctx, 'prompt must be at most 2500 characters');
  const inputs: Buffer[] = [];
  if (body.image !== undefined) {
    if (!spec.image) return invalid(ctx, `image is not supported by ${model}`);
    const img = imageInput(body.image, rawBase64Image);
    if (typeof img === 'string') return invalid(ctx, `image ${img}`);
    if (img) inputs.push(img);
    if (body.negative_prompt !== undefined) return invalid(ctx, 'negative_prompt is not supported with a reference image');
    if (spec.reference) {
      if (body.image_reference !== 'subject' && body.image_reference !== 'face') return invalid(ctx, `image_reference must be subject or face for ${model}`);
    } else if (body.image_reference !== undefined) {
      return invalid(ctx, `image_reference is only supported by ${Object.keys(KLING_IMAGE_MODELS).filter((m) => KLING_IMAGE_MODELS[m].reference).join(', ')}`);
    }
  } else {
    if (!spec.text) return invalid(ctx, `image is required by ${model}`);
    for (const k of ['image_reference', 'image_fidelity', 'human_fidelity']) if (body[k] !== undefined) return invalid(ctx, `${k} needs an image`);
  }
  for (const k of ['image_fidelity', 'human_fidelity']) {
    const v = body[k];
    if (v !== undefined && (typeof v !== 'number' || v < 0 || v > 1)) return invalid(ctx, `${k} must be a number in [0, 1]`);
  }
  if (body.negative_prompt !== undefined && (typeof body.negative_prompt !== 'string' || body.negative_prompt.length > 2500)) return invalid(ctx, 'negative_prompt must be a string of at most 2500 characters');
  const resolution = body.resolution ?? '1k';
  if (typeof resolution !== 'string' || !spec.resolutions.includes(resolution)) return invalid(ctx, `resolution must be one of ${spec.resolutions.join(', ')} for ${model}`);
  const n = body.n ?? 1;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > KLING_IMAGE_MAX_N) return invalid(ctx, `n must be an integer in [1, ${KLING_IMAGE_MAX_N}]`);
  const ratio = body.aspect_ratio ?? '16:9';
  if (typeof ratio !== 'string' || !KLING_IMAGE_RATIOS.includes(ratio)) return invalid(ctx, `aspect_ratio must be one of ${KLING_IMAGE_RATIOS.join(', ')}`);
  if (body.callback_url !== undefined && typeof body.callback_url !== 'string') return invalid(ctx, 'callback_url must be a string');
  if (body.external_task_id !== undefined && typeof body.external_task_id !== 'string') return invalid(ctx, 'external_task_id must be a string');
  const [width, height] = sizeForRatio(ratioOf(ratio)!, KLING_IMAGE_AREA[resolution]);
  const seed = drawPictures(1, [width, height], prompt, inputs)[0].seed;
  return { model, prompt, n, width, height, seed, externalTaskId: typeof body.external_task_id === 'string' ? body.external_task_id : '', createdMs: Date.now(), outcome: outcomeOf(prompt) };
}

const FAILED: Partial<Record<SimOutcome, string>> = {
  failed: 'Image generation failed, please try again later.',
  moderated: 'Failure to pass the risk control system.',
};

function taskData(ctx: SimContext, t: KlingImageTask, now: number): Record<string, unknown> {
  const { phase, since } = phaseAt(t.createdMs, t.outcome, imageTaskMs(ctx.state), now);
  const status = phase === 'queued' ? 'submitted' : phase === 'running' ? 'processing' : phase === 'done' && t.outcome === 'succeeded' ? 'succeed' : 'failed';
  const out: Record<string, unknown> = {
    task_id: t.id,
    task_status: status,
    task_status_msg: status === 'failed' ? (FAILED[t.outcome] ?? FAILED.failed) : '',
    task_info: t.externalTaskId ? { external_task_id: t.externalTaskId } : {},
    created_at: t.createdMs,
    updated_at: since,
  };
  if (status === 'succeed') {
    const pics = drawPictures(t.n, [t.width, t.height], '', [], t.seed);
    out.final_unit_deduction = String(t.n);
    out.task_result = { images: pics.map((p, index) => ({ index, url: fileUrl(ctx, p) })) };
  }
  return out;
}

export function klingImageRoutes(): SimRoute[] {
  return [
    {
      name: 'kling.images.create',
      method: 'POST',
      pattern: /^\/v1\/images\/generations$/,
      auth: true,
      claims: isJwtBearer,
      authenticate,
      errorBody: errorFor,
      handle(ctx) {
        const parsed = parseCreate(ctx);
        if (!parsed) return;
        const p = part(ctx.state);
        const t: KlingImageTask = { id: newId(p.tasks, 18), ...parsed };
        p.tasks.set(t.id, t);
        const data = taskData(ctx, t, t.createdMs);
        delete data.task_status_msg;
        sendJson(ctx.res, 200, { code: 0, message: 'SUCCEED', request_id: requestId(), data });
      },
    },
    {
      name: 'kling.images.get',
      method: 'GET',
      pattern: /^\/v1\/images\/generations\/([0-9]+)$/,
      auth: true,
      authenticate,
      errorBody: errorFor,
      handle(ctx) {
        const t = part(ctx.state).tasks.get(ctx.params[0]);
        if (!t) return sendJson(ctx.res, 404, klingError(1203, 'The requested task does not exist'));
        sendJson(ctx.res, 200, { code: 0, message: 'SUCCEED', request_id: requestId(), data: taskData(ctx, t, Date.now()) });
      },
    },
  ];
}

import { MINIMAX_IMAGE_MAX_N, MINIMAX_IMAGE_MODELS, MINIMAX_IMAGE_SIZES } from '../providers/minimax/wire.js';
import { sendJson, readJson, type SimContext, type SimRoute } from './router.js';
import { authenticate, baseResp, errorFor } from './hailuo-video.js';
import { outcomeOf } from './video-common.js';
import { dataUrlImage, drawPictures, imageInput } from './image-common.js';
import { fileUrl, render } from './images.js';

// The simulator's MiniMax image part, in MiniMax's wire format:
//   POST /v1/image_generation → {id, data:{image_urls|image_base64}, metadata:{success_count, failed_count}, base_resp}
// Synchronous. Errors travel in `base_resp.status_code` with HTTP 200, as MiniMax answers them:
// 2013 invalid parameters, 1004 no key, 1026 / 1027 sensitive input / output ("[moderation]" in
// the prompt), 1013 internal error ("[fail]").

function refuse(ctx: SimContext, code: number, message: string): void {
  sendJson(ctx.res, 200, { id: '', ...baseResp(code, message) });
}

function generate(ctx: SimContext): void {
  const body = readJson(ctx, (m) => baseResp(2013, `invalid params, ${m}`));
  if (!body) return;
  const bad = (m: string) => refuse(ctx, 2013, `invalid params, ${m}`);
  const model = typeof body.model === 'string' ? body.model : '';
  const spec = MINIMAX_IMAGE_MODELS[model];
  if (!spec) return bad(`model must be one of ${Object.keys(MINIMAX_IMAGE_MODELS).join(', ')}`);
  const prompt = body.prompt;
  if (typeof prompt !== 'string' || !prompt.trim()) return bad('prompt is required');
  if (prompt.length > 1500) return bad('prompt must be at most 1500 characters');
  let size: [number, number] = MINIMAX_IMAGE_SIZES['1:1'];
  if (body.aspect_ratio !== undefined) {
    if (typeof body.aspect_ratio !== 'string' || !spec.ratios.includes(body.aspect_ratio)) return bad(`aspect_ratio must be one of ${spec.ratios.join(', ')} for ${model}`);
    size = MINIMAX_IMAGE_SIZES[body.aspect_ratio];
  } else if (body.width !== undefined || body.height !== undefined) {
    // The aspect ratio wins when both are given; width and height go together.
    if (!spec.pixels) return bad(`width and height are not supported by ${model}`);
    const side = (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v >= 512 && v <= 2048 && v % 8 === 0;
    if (!side(body.width) || !side(body.height)) return bad('width and height must both be given, integers from 512 to 2048 divisible by 8');
    size = [body.width as number, body.height as number];
  }
  const format = body.response_format ?? 'url';
  if (format !== 'url' && format !== 'base64') return bad('response_format must be url or base64');
  const n = body.n ?? 1;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > MINIMAX_IMAGE_MAX_N) return bad(`n must be an integer from 1 to ${MINIMAX_IMAGE_MAX_N}`);
  if (body.seed !== undefined && (typeof body.seed !== 'number' || !Number.isInteger(body.seed))) return bad('seed must be an integer');
  for (const k of ['prompt_optimizer', 'aigc_watermark']) if (body[k] !== undefined && typeof body[k] !== 'boolean') return bad(`${k} must be a boolean`);
  const inputs: Buffer[] = [];
  if (body.subject_reference !== undefined) {
    const refs = body.subject_reference;
    if (!Array.isArray(refs) || refs.length !== 1) return bad('subject_reference must hold exactly one reference');
    const ref = refs[0] as { type?: unknown; image_file?: unknown } | null;
    if (!ref || typeof ref !== 'object' || ref.type !== 'character') return bad('subject_reference[0].type must be character');
    const img = imageInput(ref.image_file, dataUrlImage);
    if (typeof img === 'string') return bad(`subject_reference[0].image_file ${img}`);
    if (img) inputs.push(img);
  }
  const outcome = outcomeOf(prompt);
  if (outcome === 'moderated') return refuse(ctx, 1027, 'output new_sensitive');
  if (outcome !== 'succeeded') return refuse(ctx, 1013, 'internal service error');
  const pics = drawPictures(n, size, prompt, inputs, typeof body.seed === 'number' ? body.seed : Math.floor(Math.random() * 0xffffffff));
  const data = format === 'base64' ? { image_base64: pics.map((p) => render(p).toString('base64')) } : { image_urls: pics.map((p) => fileUrl(ctx, p)) };
  sendJson(ctx.res, 200, {
    id: `${Date.now().toString(16)}${Math.floor(Math.random() * 1e8).toString(16)}`,
    data,
    metadata: { failed_count: '0', success_count: String(n) },
    ...baseResp(0, 'success'),
  });
}

export function minimaxImageRoutes(): SimRoute[] {
  return [{ name: 'minimax.images.generate', method: 'POST', pattern: /^\/v1\/image_generation$/, auth: true, authenticate, errorBody: errorFor, handle: generate }];
}

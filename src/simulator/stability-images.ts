import { randomUUID } from 'node:crypto';
import { STABILITY_MAX_SEED, STABILITY_RATIOS, STABILITY_SD3_MODELS, STABILITY_SERVICES, STABILITY_STYLE_PRESETS } from '../providers/stability/wire.js';
import { pngSize, sniffImageType } from '../http/image-type.js';
import { sendJson, type SimContext, type SimRoute } from './router.js';
import { boundaryOf, parseMultipart } from './multipart.js';
import { outcomeOf } from './video-common.js';
import { drawPictures, ratioOf, sizeForRatio } from './image-common.js';
import { render } from './images.js';

// The simulator's Stability part, in the Stable Image API's wire format (multipart/form-data in,
// key as `Authorization: Bearer`):
//   POST /v2beta/stable-image/generate/{ultra|core|sd3}  prompt, aspect_ratio, negative_prompt, seed, output_format, …
//   POST /v2beta/stable-image/edit/inpaint               image, mask (white marks what to redraw), prompt, …
// The answer is one image: its bytes with `accept: image/*` (the default; headers `finish-reason`
// and `seed`), or {image (base64), finish_reason, seed} with `accept: application/json`.
// Errors are {id, name, errors[]}: 400 bad_request, 401 unauthorized, 403 content_moderation
// ("[moderation]"), 500 internal_error ("[fail]"). The simulator draws PNG whatever output_format
// asks (its content-type says so); a picture is about one megapixel in the asked aspect ratio.

const error = (name: string, message: string) => ({ id: randomUUID().replace(/-/g, ''), name, errors: [message] });
const errorFor = (status: number, message: string) => error(status === 429 ? 'rate_limit_exceeded' : status === 401 ? 'unauthorized' : status >= 500 ? 'internal_error' : 'bad_request', message);

function authenticate(ctx: SimContext): boolean {
  if (/^Bearer \S+$/.test(String(ctx.req.headers.authorization ?? ''))) return true;
  sendJson(ctx.res, 401, error('unauthorized', 'authorization: missing or invalid Bearer API key'));
  return false;
}

function handle(ctx: SimContext, service: string): void {
  const bad = (m: string) => sendJson(ctx.res, 400, error('bad_request', m));
  const accept = String(ctx.req.headers.accept ?? 'image/*');
  const wantsJson = accept === 'application/json';
  if (!wantsJson && accept !== 'image/*' && accept !== '*/*') return bad('accept: must be image/* or application/json');
  const boundary = boundaryOf(ctx.req.headers['content-type']);
  const parts = boundary ? parseMultipart(ctx.body, boundary) : null;
  if (!parts) return bad('content-type: the body must be multipart/form-data');
  const field = (name: string) => parts.find((p) => p.name === name && p.filename === undefined)?.data.toString('utf8');
  const file = (name: string) => parts.find((p) => p.name === name && p.filename !== undefined)?.data;
  const prompt = field('prompt');
  if (!prompt || !prompt.trim()) return bad('prompt: is required');
  if (prompt.length > 10000) return bad('prompt: must be at most 10000 characters');
  const edit = service === 'inpaint';
  const spec = edit ? { formats: ['png', 'jpeg', 'webp'], image: true, stylePreset: true } : STABILITY_SERVICES[service];
  const format = field('output_format') ?? 'png';
  if (!spec.formats.includes(format)) return bad(`output_format: must be one of ${spec.formats.join(', ')}`);
  const seed = field('seed');
  if (seed !== undefined && (!/^\d+$/.test(seed) || Number(seed) > STABILITY_MAX_SEED)) return bad(`seed: must be an integer from 0 to ${STABILITY_MAX_SEED}`);
  const preset = field('style_preset');
  if (preset !== undefined && (!spec.stylePreset || !STABILITY_STYLE_PRESETS.includes(preset))) return bad(spec.stylePreset ? `style_preset: must be one of ${STABILITY_STYLE_PRESETS.join(', ')}` : `style_preset: is not supported by ${service}`);
  let negative = true;
  if (service === 'sd3') {
    const model = field('model') ?? 'sd3.5-large';
    if (!STABILITY_SD3_MODELS[model]) return bad(`model: must be one of ${Object.keys(STABILITY_SD3_MODELS).join(', ')}`);
    negative = STABILITY_SD3_MODELS[model].negative;
  }
  if (field('negative_prompt') !== undefined && !negative) return bad('negative_prompt: is not supported by this model');
  const image = file('image');
  const inputs: Buffer[] = [];
  let size: [number, number] | undefined;
  if (image) {
    if (!spec.image) return bad(`image: is not supported by ${service}`);
    if (!sniffImageType(image)) return bad('image: must be a jpeg, png or webp file');
    inputs.push(image);
    const dims = pngSize(image);
    if (dims && (dims.width < 64 || dims.height < 64)) return bad('image: every side must be at least 64 pixels');
    if (dims) size = [dims.width, dims.height];
  }
  if (edit) {
    if (!image) return bad('image: is required');
    const mask = file('mask');
    if (mask) {
      if (!sniffImageType(mask)) return bad('mask: must be a jpeg, png or webp file');
      inputs.push(mask);
    }
    const grow = field('grow_mask');
    if (grow !== undefined && (!/^\d+$/.test(grow) || Number(grow) > 100)) return bad('grow_mask: must be an integer from 0 to 100');
  } else {
    const mode = field('mode') ?? 'text-to-image';
    if (service === 'sd3' && mode !== 'text-to-image' && mode !== 'image-to-image') return bad('mode: must be text-to-image or image-to-image');
    const i2i = service === 'sd3' ? mode === 'image-to-image' : !!image;
    if (service === 'sd3' && i2i !== !!image) return bad(i2i ? 'image: is required in image-to-image mode' : 'image: is only taken in image-to-image mode');
    const strength = field('strength');
    if (i2i && (strength === undefined || !(Number(strength) >= 0 && Number(strength) <= 1))) return bad('strength: is required with an image, a number from 0 to 1');
    if (!i2i && strength !== undefined) return bad('strength: needs an image');
    const ratio = field('aspect_ratio');
    if (ratio !== undefined) {
      if (i2i) return bad('aspect_ratio: is not taken with an image (the image decides)');
      if (!STABILITY_RATIOS.includes(ratio)) return bad(`aspect_ratio: must be one of ${STABILITY_RATIOS.join(', ')}`);
    }
    if (!i2i) size = sizeForRatio(ratioOf(ratio ?? '1:1')!, 1024 * 1024);
  }
  const outcome = outcomeOf(prompt);
  if (outcome === 'moderated') return sendJson(ctx.res, 403, error('content_moderation', 'Your request was flagged by our content moderation system, as a result your request was denied and you were not charged.'));
  if (outcome !== 'succeeded') return sendJson(ctx.res, 500, error('internal_error', 'An unexpected server error occurred, please try again.'));
  const used = seed !== undefined && Number(seed) !== 0 ? Number(seed) : Math.floor(Math.random() * STABILITY_MAX_SEED) + 1;
  const png = render(drawPictures(1, size ?? [1024, 1024], prompt, inputs, used)[0]);
  if (wantsJson) return sendJson(ctx.res, 200, { image: png.toString('base64'), finish_reason: 'SUCCESS', seed: used });
  ctx.res.writeHead(200, { 'content-type': 'image/png', 'content-length': png.length, 'finish-reason': 'SUCCESS', seed: String(used) });
  ctx.res.end(png);
}

export function stabilityImageRoutes(): SimRoute[] {
  return [
    ...Object.keys(STABILITY_SERVICES).map((service) => ({ service, path: `generate/${service}` })),
    { service: 'inpaint', path: 'edit/inpaint' },
  ].map(({ service, path }) => ({
    name: `stability.images.${service}`,
    method: 'POST',
    pattern: new RegExp(`^/v2beta/stable-image/${path}$`),
    auth: true,
    authenticate,
    errorBody: errorFor,
    handle: (ctx: SimContext) => handle(ctx, service),
  }));
}

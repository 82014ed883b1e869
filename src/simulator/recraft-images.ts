import { RECRAFT_MAX_N, RECRAFT_MODELS } from '../providers/recraft/wire.js';
import { pngSize, sniffImageType } from '../http/image-type.js';
import { sendJson, readJson, type SimContext, type SimRoute } from './router.js';
import { boundaryOf, parseMultipart } from './multipart.js';
import { outcomeOf } from './video-common.js';
import { dataUrlImage, drawPictures, imageInput } from './image-common.js';
import { fileUrl, render } from './images.js';
import { randomUUID } from 'node:crypto';

// The simulator's Recraft part, in Recraft's wire format, under /recraft on the simulator's origin
// (Recraft's own origin is external.api.recraft.ai; its paths would clash with OpenAI's here):
//   POST /recraft/v1/images/generations   JSON {prompt, model, style, size, n, response_format, negative_prompt}
//   POST /recraft/v1/images/imageToImage  image, prompt, strength, …
//   POST /recraft/v1/images/inpaint       image, mask (white marks what to redraw), prompt, …
// The image endpoints take multipart files or JSON with the images as URLs or data URLs.
// → {created, data:[{image_id, url} | {image_id, b64_json}]}, synchronous, Bearer key. Errors are
// {code, message}: 400 invalid input, 401 no key, 400 `prompt_rejected` for "[moderation]",
// 500 for "[fail]". The simulator draws raster styles only (vector styles answer SVG at Recraft).

type Kind = 'generate' | 'imageToImage' | 'inpaint';

const error = (code: string, message: string) => ({ code, message });
const errorFor = (status: number, message: string) => error(status === 429 ? 'too_many_requests' : status >= 500 ? 'internal_error' : 'invalid_request', message);

function authenticate(ctx: SimContext): boolean {
  if (/^Bearer \S+$/.test(String(ctx.req.headers.authorization ?? ''))) return true;
  sendJson(ctx.res, 401, error('not_authenticated', 'Provide an API token in the Authorization header: Bearer <token>.'));
  return false;
}

/**
 * The request's fields: JSON (every endpoint; images as URLs or data URLs), or multipart for the
 * image endpoints; undefined after answering 400. A data URL's bytes are checked like an upload's.
 */
function fieldsOf(ctx: SimContext, kind: Kind): { fields: Record<string, unknown>; files: Record<string, Buffer | null> } | undefined {
  const bad = (m: string) => void sendJson(ctx.res, 400, error('invalid_request', m));
  const boundary = boundaryOf(ctx.req.headers['content-type']);
  if (kind === 'generate' || !boundary) {
    const body = readJson(ctx, (m) => error('invalid_request', m));
    if (!body) return undefined;
    const files: Record<string, Buffer | null> = {};
    for (const k of kind === 'generate' ? [] : ['image', 'mask']) {
      if (body[k] === undefined) continue;
      const img = imageInput(body[k], dataUrlImage);
      if (typeof img === 'string') return bad(`${k} ${img}.`);
      files[k] = img;
      delete body[k];
    }
    return { fields: body, files };
  }
  const parts = parseMultipart(ctx.body, boundary);
  if (!parts) return bad('The body must be well-formed multipart/form-data.');
  const fields: Record<string, unknown> = {};
  const files: Record<string, Buffer | null> = {};
  for (const p of parts) {
    if (p.filename !== undefined) files[p.name] = p.data;
    else fields[p.name] = p.data.toString('utf8');
  }
  return { fields, files };
}

function handle(ctx: SimContext, kind: Kind): void {
  const bad = (m: string) => sendJson(ctx.res, 400, error('invalid_request', m));
  const parsed = fieldsOf(ctx, kind);
  if (!parsed) return;
  const { fields: f, files } = parsed;
  const num = (v: unknown) => (typeof v === 'string' && v.trim() !== '' ? Number(v) : v);
  const model = f.model ?? 'recraftv3';
  if (typeof model !== 'string' || !RECRAFT_MODELS[model]) return bad(`model must be one of ${Object.keys(RECRAFT_MODELS).join(', ')}.`);
  const spec = RECRAFT_MODELS[model];
  const prompt = f.prompt;
  if (typeof prompt !== 'string' || !prompt.trim()) return bad('prompt is required.');
  const limit = model === 'recraftv3' ? 1000 : 10000;
  if (prompt.length > limit) return bad(`prompt must be at most ${limit} characters for ${model}.`);
  if (f.style !== undefined && (typeof f.style !== 'string' || !spec.styles.includes(f.style))) {
    return bad(spec.styles.length ? `style must be one of ${spec.styles.join(', ')} for ${model}.` : `style is not supported by ${model}.`);
  }
  if (f.negative_prompt !== undefined && (!spec.negative || typeof f.negative_prompt !== 'string')) return bad(spec.negative ? 'negative_prompt must be a string.' : `negative_prompt is not supported by ${model}.`);
  const n = num(f.n ?? 1);
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > RECRAFT_MAX_N) return bad(`n must be an integer from 1 to ${RECRAFT_MAX_N}.`);
  const format = f.response_format ?? 'url';
  if (format !== 'url' && format !== 'b64_json') return bad('response_format must be url or b64_json.');
  let size = spec.sizes['1:1'];
  const inputs: Buffer[] = [];
  if (kind === 'generate') {
    if (f.size !== undefined) {
      const s = typeof f.size === 'string' ? (spec.sizes[f.size] ?? (Object.values(spec.sizes).includes(f.size) ? f.size : undefined)) : undefined;
      if (!s) return bad(`size must be one of ${Object.values(spec.sizes).join(', ')} or an aspect ratio ${Object.keys(spec.sizes).join(', ')} for ${model}.`);
      size = s;
    }
  } else {
    const image = files.image;
    if (image === undefined || (image && !sniffImageType(image))) return bad('image is required: a PNG, JPEG or WEBP file, or its URL.');
    if (image) inputs.push(image);
    const dims = image && pngSize(image);
    if (dims) size = `${dims.width}x${dims.height}`;
    if (kind === 'imageToImage') {
      const strength = num(f.strength);
      if (typeof strength !== 'number' || !(strength >= 0 && strength <= 1)) return bad('strength is required: a number from 0 to 1.');
    } else {
      const mask = files.mask;
      if (mask === undefined || (mask && !sniffImageType(mask))) return bad('mask is required: a grayscale PNG, JPEG or WEBP file, or its URL.');
      const m = mask && pngSize(mask);
      if (dims && m && (m.width !== dims.width || m.height !== dims.height)) return bad('mask must have the same size as image.');
      if (mask) inputs.push(mask);
    }
  }
  const outcome = outcomeOf(prompt);
  if (outcome === 'moderated') return sendJson(ctx.res, 400, error('prompt_rejected', 'The prompt was rejected by the content policy.'));
  if (outcome !== 'succeeded') return sendJson(ctx.res, 500, error('internal_error', 'Image generation failed.'));
  const [w, h] = size.split('x').map(Number);
  const pics = drawPictures(n, [w, h], prompt, inputs, Math.floor(Math.random() * 0xffffffff));
  sendJson(ctx.res, 200, {
    created: Math.floor(Date.now() / 1000),
    data: pics.map((p) => ({ image_id: randomUUID(), ...(format === 'b64_json' ? { b64_json: render(p).toString('base64') } : { url: fileUrl(ctx, p) }) })),
  });
}

export function recraftImageRoutes(): SimRoute[] {
  const paths: Record<Kind, string> = { generate: 'generations', imageToImage: 'imageToImage', inpaint: 'inpaint' };
  return (Object.keys(paths) as Kind[]).map((kind) => ({
    name: `recraft.images.${kind}`,
    method: 'POST',
    pattern: new RegExp(`^/recraft/v1/images/${paths[kind]}$`),
    auth: true,
    authenticate,
    errorBody: errorFor,
    handle: (ctx: SimContext) => handle(ctx, kind),
  }));
}

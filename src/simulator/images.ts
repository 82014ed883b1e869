import { sendJson, readJson, type SimContext, type SimRoute } from './router.js';
import { arkError, openaiError } from './shapes.js';
import { boundaryOf, parseMultipart, type FormPart } from './multipart.js';
import { crc32, patternImage, seedOf } from './png.js';
import { pngSize, sniffImageType } from '../http/image-type.js';
import { SIMULATOR_IMAGE_FILES } from '../providers/simulator/wire.js';

// Image generation and editing in two wire formats: OpenAI Images (/v1/images/generations JSON,
// /v1/images/edits multipart) and Ark Seedream (/api/v3/images/generations). Every answer holds
// real PNG files drawn here, returned as base64 or as URLs this simulator serves. A URL encodes
// the picture's size and seed, so serving it needs no stored state.

const MAX_SIDE = 4096;
const MAX_PIXELS = 4096 * 4096;
const MAX_N = 10;
/** Prompt marker that makes the routes refuse as their providers' safety systems do: Ark every image as sensitive, OpenAI the request. */
export const SENSITIVE_MARKER = '[sim:sensitive]';

export interface Picture {
  width: number;
  height: number;
  seed: number;
}

function fileId(p: Picture): string {
  return `${p.width}x${p.height}-${p.seed.toString(16).padStart(8, '0')}`;
}

export function fileUrl(ctx: SimContext, p: Picture): string {
  return `${ctx.state.baseUrl}${SIMULATOR_IMAGE_FILES}${fileId(p)}.png`;
}

export function render(p: Picture): Buffer {
  return patternImage(p.width, p.height, p.seed);
}

/** Whether the simulator draws a picture of w×h: what `size` allows, and what an input image may claim. */
export function drawable(w: number, h: number): boolean {
  return w >= 1 && h >= 1 && w <= MAX_SIDE && h <= MAX_SIDE && w * h <= MAX_PIXELS;
}

/** "WxH" → pixels; undefined when absent/auto; null when invalid. */
function parseSize(size: unknown, fallback: [number, number]): [number, number] | null {
  if (size === undefined || size === null || size === 'auto') return fallback;
  if (typeof size !== 'string') return null;
  const k = /^([124])K$/i.exec(size);
  if (k) return [1024 * Number(k[1]), 1024 * Number(k[1])];
  const m = /^(\d{1,5})[x*×](\d{1,5})$/.exec(size);
  if (!m) return null;
  const w = Number(m[1]);
  const h = Number(m[2]);
  return drawable(w, h) ? [w, h] : null;
}

function parseN(n: unknown): number | null {
  if (n === undefined || n === null) return 1;
  const v = typeof n === 'string' && /^\d+$/.test(n) ? Number(n) : n;
  return typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= MAX_N ? v : null;
}

function openaiData(ctx: SimContext, pictures: Picture[], format: string, revisedPrompt?: string): unknown[] {
  return pictures.map((p) => {
    const d: Record<string, string> = format === 'b64_json' ? { b64_json: render(p).toString('base64') } : { url: fileUrl(ctx, p) };
    if (revisedPrompt !== undefined) d.revised_prompt = revisedPrompt;
    return d;
  });
}

function openaiUsage(prompt: string, inputImages: number, outputImages: number): unknown {
  const text = Math.ceil(prompt.length / 4);
  const image = inputImages * 258;
  const output = outputImages * 1056;
  return { input_tokens: text + image, input_tokens_details: { text_tokens: text, image_tokens: image }, output_tokens: output, total_tokens: text + image + output };
}

export function pictures(n: number, size: [number, number], seed: number): Picture[] {
  return Array.from({ length: n }, (_, i) => ({ width: size[0], height: size[1], seed: (seed + i * 0x9e3779b1) >>> 0 }));
}

/** OpenAI's refusal of a prompt its safety system blocks (gpt-image-1): a 400 with code moderation_blocked. */
function refuseUnsafe(ctx: SimContext): void {
  sendJson(ctx.res, 400, {
    error: { message: 'Your request was rejected as a result of our safety system. Your request may contain content that is not allowed by our safety system.', type: 'image_generation_user_error', param: null, code: 'moderation_blocked' },
  });
}

function openaiGenerate(ctx: SimContext): void {
  const body = readJson(ctx, (m) => openaiError(m, 'invalid_json'));
  if (!body) return;
  const bad = (message: string, param: string) => sendJson(ctx.res, 400, { error: { message, type: 'invalid_request_error', param, code: 'invalid_value' } });
  if (typeof body.prompt !== 'string' || !body.prompt.trim()) return bad('prompt is required.', 'prompt');
  const n = parseN(body.n);
  if (n === null) return bad(`n must be an integer from 1 to ${MAX_N}.`, 'n');
  const size = parseSize(body.size, [1024, 1024]);
  if (!size) return bad(`size must be WIDTHxHEIGHT, at most ${MAX_SIDE} per side.`, 'size');
  const format = body.response_format ?? 'url';
  if (format !== 'url' && format !== 'b64_json') return bad('response_format must be url or b64_json.', 'response_format');
  if (body.prompt.includes(SENSITIVE_MARKER)) return refuseUnsafe(ctx);
  sendJson(ctx.res, 200, {
    created: Math.floor(Date.now() / 1000),
    data: openaiData(ctx, pictures(n, size, seedOf(body.prompt)), format, body.prompt),
    usage: openaiUsage(body.prompt, 0, n),
  });
}

function openaiEdit(ctx: SimContext): void {
  const bad = (message: string, param: string | null) => sendJson(ctx.res, 400, { error: { message, type: 'invalid_request_error', param, code: 'invalid_value' } });
  const boundary = boundaryOf(ctx.req.headers['content-type']);
  if (!boundary) return bad('The body must be multipart/form-data.', null);
  const parts = parseMultipart(ctx.body, boundary);
  if (!parts) return bad('The multipart body is malformed.', null);
  const field = (name: string): string | undefined => parts.find((p) => p.name === name && p.filename === undefined)?.data.toString('utf8');
  const images: FormPart[] = parts.filter((p) => (p.name === 'image' || p.name === 'image[]') && p.filename !== undefined);
  const mask = parts.find((p) => p.name === 'mask' && p.filename !== undefined);
  const prompt = field('prompt');
  if (!prompt || !prompt.trim()) return bad('prompt is required.', 'prompt');
  if (!images.length) return bad('image is required.', 'image');
  if (prompt.includes(SENSITIVE_MARKER)) return refuseUnsafe(ctx);
  if (images.length > 16) return bad('At most 16 images.', 'image');
  for (const img of images) if (!sniffImageType(img.data)) return bad(`Invalid image file "${img.filename}": use png, jpeg or webp.`, 'image');
  // A PNG's header names its size, and the output defaults to the first image's: a few bytes may
  // claim any size, so a claim beyond what `size` allows is refused before anything is drawn.
  for (const img of mask ? [...images, mask] : images) {
    const claimed = pngSize(img.data);
    if (claimed && !drawable(claimed.width, claimed.height)) {
      return bad(`Image "${img.filename}" is ${claimed.width}x${claimed.height}: images must be 1 to ${MAX_SIDE} pixels per side.`, img === mask ? 'mask' : 'image');
    }
  }
  const first = pngSize(images[0].data);
  if (mask) {
    const m = pngSize(mask.data);
    if (!m) return bad('mask must be a PNG file.', 'mask');
    if (first && (first.width !== m.width || first.height !== m.height)) return bad('mask must have the same dimensions as the image.', 'mask');
  }
  const n = parseN(field('n'));
  if (n === null) return bad(`n must be an integer from 1 to ${MAX_N}.`, 'n');
  const size = parseSize(field('size'), first ? [first.width, first.height] : [1024, 1024]);
  if (!size) return bad(`size must be WIDTHxHEIGHT, at most ${MAX_SIDE} per side.`, 'size');
  const format = field('response_format') ?? 'url';
  if (format !== 'url' && format !== 'b64_json') return bad('response_format must be url or b64_json.', 'response_format');
  // The edit depends on the prompt and on every input byte, so another input gives another picture.
  const seed = (seedOf(prompt) ^ crc32(...images.map((i) => i.data), ...(mask ? [mask.data] : []))) >>> 0;
  sendJson(ctx.res, 200, {
    created: Math.floor(Date.now() / 1000),
    data: openaiData(ctx, pictures(n, size, seed), format),
    usage: openaiUsage(prompt, images.length, n),
  });
}

/** Ark's `image`: one or more http(s) URLs or data:image/<fmt>;base64 URLs; a message when invalid. */
function checkArkImages(value: unknown): { count: number; bytes: Buffer[] } | string {
  if (value === undefined || value === null) return { count: 0, bytes: [] };
  const list = Array.isArray(value) ? value : [value];
  if (!list.length || list.length > 14) return 'image must hold 1 to 14 images.';
  const bytes: Buffer[] = [];
  for (const v of list) {
    if (typeof v !== 'string') return 'image must be a URL or a base64 data URL.';
    if (/^https?:\/\//.test(v)) continue;
    const m = /^data:image\/([a-z]+);base64,([A-Za-z0-9+/=]+)$/.exec(v);
    if (!m) return 'image must be a URL or data:image/<format>;base64,<data> with a lowercase format.';
    const data = Buffer.from(m[2], 'base64');
    const type = sniffImageType(data);
    if (!type || (m[1] !== type && !(m[1] === 'jpg' && type === 'jpeg'))) return `image data does not decode to the declared ${m[1]} image.`;
    bytes.push(data);
  }
  return { count: list.length, bytes };
}

function arkGenerate(ctx: SimContext): void {
  const body = readJson(ctx, (m) => arkError(m, 'InvalidParameter'));
  if (!body) return;
  const missing = (p: string) => sendJson(ctx.res, 400, arkError(`The parameter \`${p}\` specified in the request is missing.`, 'MissingParameter'));
  const invalid = (p: string, why: string) => sendJson(ctx.res, 400, arkError(`The parameter \`${p}\` specified in the request is not valid: ${why}`, 'InvalidParameter'));
  if (typeof body.model !== 'string' || !body.model) return missing('model');
  if (typeof body.prompt !== 'string' || !body.prompt.trim()) return missing('prompt');
  const images = checkArkImages(body.image);
  if (typeof images === 'string') return invalid('image', images);
  const size = parseSize(body.size, [2048, 2048]);
  if (!size) return invalid('size', 'use WIDTHxHEIGHT or 1K/2K/4K.');
  const format = body.response_format ?? 'url';
  if (format !== 'url' && format !== 'b64_json') return invalid('response_format', 'use url or b64_json.');
  const sequential = body.sequential_image_generation ?? 'disabled';
  if (sequential !== 'auto' && sequential !== 'disabled') return invalid('sequential_image_generation', 'use auto or disabled.');
  const options = (body.sequential_image_generation_options ?? {}) as { max_images?: unknown };
  const maxImages = options.max_images ?? 15;
  if (!Number.isInteger(maxImages) || (maxImages as number) < 1 || (maxImages as number) > 15) return invalid('sequential_image_generation_options.max_images', 'use 1 to 15.');
  if (body.stream === true) return invalid('stream', 'the simulator answers image generations in one piece.');
  const count = sequential === 'auto' ? Math.max(1, Math.min(maxImages as number, 15 - images.count)) : 1;
  // Like Seedream: a given seed repeats a picture, no seed (or -1) draws a new one every call.
  const given = typeof body.seed === 'number' && body.seed !== -1 ? body.seed : Math.floor(Math.random() * 0xffffffff);
  const seed = (seedOf(body.prompt) ^ given ^ crc32(...images.bytes)) >>> 0;
  const created = Math.floor(Date.now() / 1000);
  if (body.prompt.includes(SENSITIVE_MARKER)) {
    const error = { code: 'OutputImageSensitiveContentDetected', message: 'The request failed because the output image may contain sensitive information.' };
    sendJson(ctx.res, 200, { model: body.model, created, data: Array.from({ length: count }, () => ({ error })), usage: { generated_images: 0, output_tokens: 0, total_tokens: 0 } });
    return;
  }
  const pics = pictures(count, size, seed);
  const tokens = Math.round(pics.reduce((s, p) => s + p.width * p.height, 0) / 256);
  sendJson(ctx.res, 200, {
    model: body.model,
    created,
    data: pics.map((p) => ({ ...(format === 'b64_json' ? { b64_json: render(p).toString('base64') } : { url: fileUrl(ctx, p) }), size: `${p.width}x${p.height}` })),
    usage: { generated_images: pics.length, output_tokens: tokens, total_tokens: tokens },
  });
}

function serveFile(ctx: SimContext): void {
  const [w, h, seed] = [Number(ctx.params[0]), Number(ctx.params[1]), parseInt(ctx.params[2], 16)];
  if (!drawable(w, h)) return sendJson(ctx.res, 404, openaiError('no such file', 'not_found'));
  const png = render({ width: w, height: h, seed });
  ctx.res.writeHead(200, { 'content-type': 'image/png', 'content-length': png.length, 'cache-control': 'public, max-age=86400' });
  ctx.res.end(png);
}

export function imageRoutes(): SimRoute[] {
  return [
    { name: 'openai.images.generate', method: 'POST', pattern: /^\/v1\/images\/generations$/, auth: true, handle: openaiGenerate },
    { name: 'openai.images.edit', method: 'POST', pattern: /^\/v1\/images\/edits$/, auth: true, handle: openaiEdit },
    {
      name: 'ark.images.generate',
      method: 'POST',
      pattern: /^\/api\/v3\/images\/generations$/,
      auth: true,
      handle: arkGenerate,
      errorBody: (status, message) => arkError(message, status === 429 ? 'RateLimitExceeded.EndpointRPMExceeded' : status >= 500 ? 'InternalServiceError' : 'InvalidParameter', status >= 500 ? 'InternalServiceError' : 'BadRequest'),
    },
    { name: 'files.image', method: 'GET', pattern: /^\/__sim\/files\/(\d{1,5})x(\d{1,5})-([0-9a-f]{8})\.png$/, auth: false, handle: serveFile },
  ];
}

import { IDEOGRAM_MAGIC, IDEOGRAM_MAX_IMAGES, IDEOGRAM_MAX_SEED, IDEOGRAM_RATIOS, IDEOGRAM_RATIO_SIZES, IDEOGRAM_RESOLUTIONS, IDEOGRAM_SPEEDS, IDEOGRAM_STYLES } from '../providers/ideogram/wire.js';
import { pngSize, sniffImageType } from '../http/image-type.js';
import { sendJson, type SimContext, type SimRoute } from './router.js';
import { boundaryOf, parseMultipart, type FormPart } from './multipart.js';
import { outcomeOf } from './video-common.js';
import { drawPictures } from './image-common.js';
import { fileUrl } from './images.js';

// The simulator's Ideogram part, in Ideogram 3.0's wire format (multipart/form-data in, JSON out,
// key in the `Api-Key` header):
//   POST /v1/ideogram-v3/generate  prompt, aspect_ratio | resolution, rendering_speed, num_images, seed, …
//   POST /v1/ideogram-v3/edit      image + mask (same size; black marks what to redraw) + prompt
//   POST /v1/ideogram-v3/remix     image + prompt (+ image_weight), a new picture after the image
// → {created, data:[{prompt, resolution, is_image_safe, seed, url, style_type}]}, synchronous.
// Errors are {error} with 400 invalid input, 401 no key, 422 a prompt that fails the safety check
// ("[moderation]"), 500 ("[fail]").

type Kind = 'generate' | 'edit' | 'remix';

function authenticate(ctx: SimContext): boolean {
  if (String(ctx.req.headers['api-key'] ?? '').trim()) return true;
  sendJson(ctx.res, 401, { error: 'Not authorized: send your API key in the Api-Key header.' });
  return false;
}

const errorFor = (status: number, message: string) => ({ error: status === 429 ? 'Too many requests.' : message });

function handle(ctx: SimContext, kind: Kind): void {
  const bad = (message: string) => sendJson(ctx.res, 400, { error: message });
  const boundary = boundaryOf(ctx.req.headers['content-type']);
  if (!boundary) return bad('The body must be multipart/form-data.');
  const parts = parseMultipart(ctx.body, boundary);
  if (!parts) return bad('The multipart body is malformed.');
  const field = (name: string): string | undefined => parts.find((p) => p.name === name && p.filename === undefined)?.data.toString('utf8');
  const file = (name: string): FormPart | undefined => parts.find((p) => p.name === name && p.filename !== undefined);
  const known = new Set(['prompt', 'seed', 'resolution', 'aspect_ratio', 'rendering_speed', 'magic_prompt', 'negative_prompt', 'num_images', 'style_type', 'style_codes', 'color_palette', 'style_reference_images', 'image', 'mask', 'image_weight']);
  const unknown = parts.find((p) => !known.has(p.name));
  if (unknown) return bad(`Unknown field ${unknown.name}.`);
  const prompt = field('prompt');
  if (!prompt || !prompt.trim()) return bad('prompt is required.');
  const oneOf = (name: string, allowed: string[]): string | undefined | null => {
    const v = field(name);
    return v === undefined || allowed.includes(v) ? v : null;
  };
  const speed = oneOf('rendering_speed', IDEOGRAM_SPEEDS);
  if (speed === null) return bad(`rendering_speed must be one of ${IDEOGRAM_SPEEDS.join(', ')}.`);
  if (oneOf('magic_prompt', IDEOGRAM_MAGIC) === null) return bad(`magic_prompt must be one of ${IDEOGRAM_MAGIC.join(', ')}.`);
  const style = oneOf('style_type', IDEOGRAM_STYLES);
  if (style === null) return bad(`style_type must be one of ${IDEOGRAM_STYLES.join(', ')}.`);
  const count = field('num_images') ?? '1';
  if (!/^\d+$/.test(count) || Number(count) < 1 || Number(count) > IDEOGRAM_MAX_IMAGES) return bad(`num_images must be an integer from 1 to ${IDEOGRAM_MAX_IMAGES}.`);
  const seedText = field('seed');
  if (seedText !== undefined && (!/^\d+$/.test(seedText) || Number(seedText) > IDEOGRAM_MAX_SEED)) return bad(`seed must be an integer from 0 to ${IDEOGRAM_MAX_SEED}.`);
  const inputs: Buffer[] = [];
  let size = IDEOGRAM_RATIO_SIZES['1x1'];
  if (kind !== 'edit') {
    const ratio = field('aspect_ratio');
    const resolution = field('resolution');
    if (ratio !== undefined && resolution !== undefined) return bad('Give aspect_ratio or resolution, not both.');
    if (ratio !== undefined && !IDEOGRAM_RATIOS.includes(ratio)) return bad(`aspect_ratio must be one of ${IDEOGRAM_RATIOS.join(', ')}.`);
    if (resolution !== undefined && !IDEOGRAM_RESOLUTIONS.includes(resolution)) return bad(`resolution must be one of ${IDEOGRAM_RESOLUTIONS.join(', ')}.`);
    size = resolution ?? IDEOGRAM_RATIO_SIZES[ratio ?? '1x1'];
  } else {
    for (const k of ['aspect_ratio', 'resolution', 'negative_prompt']) if (field(k) !== undefined) return bad(`${k} is not supported by edit.`);
  }
  if (kind === 'generate') {
    if (file('image') || file('mask')) return bad('generate takes no image: use edit or remix.');
  } else {
    const image = file('image');
    if (!image) return bad('image is required.');
    if (!sniffImageType(image.data)) return bad('image must be a JPEG, PNG or WebP file.');
    inputs.push(image.data);
    const dims = pngSize(image.data);
    if (kind === 'edit') {
      const mask = file('mask');
      if (!mask) return bad('mask is required.');
      if (!sniffImageType(mask.data)) return bad('mask must be a JPEG, PNG or WebP file.');
      const m = pngSize(mask.data);
      if (dims && m && (dims.width !== m.width || dims.height !== m.height)) return bad('mask must have the same size as image.');
      inputs.push(mask.data);
      if (dims) size = `${dims.width}x${dims.height}`;
    } else {
      if (file('mask')) return bad('remix takes no mask: use edit.');
      const weight = field('image_weight');
      if (weight !== undefined && (!/^\d+$/.test(weight) || Number(weight) < 1 || Number(weight) > 100)) return bad('image_weight must be an integer from 1 to 100.');
    }
  }
  const outcome = outcomeOf(prompt);
  if (outcome === 'moderated') return sendJson(ctx.res, 422, { error: 'Prompt failed the safety check.' });
  if (outcome !== 'succeeded') return sendJson(ctx.res, 500, { error: 'Image generation failed.' });
  const [w, h] = size.split('x').map(Number);
  const pics = drawPictures(Number(count), [w, h], prompt, inputs, seedText !== undefined ? Number(seedText) : Math.floor(Math.random() * IDEOGRAM_MAX_SEED));
  sendJson(ctx.res, 200, {
    created: new Date().toISOString(),
    data: pics.map((p) => ({ prompt, resolution: size, is_image_safe: true, seed: p.seed & IDEOGRAM_MAX_SEED, url: fileUrl(ctx, p), style_type: style ?? 'GENERAL' })),
  });
}

export function ideogramImageRoutes(): SimRoute[] {
  return (['generate', 'edit', 'remix'] as const).map((kind) => ({
    name: `ideogram.images.${kind}`,
    method: 'POST',
    pattern: new RegExp(`^/v1/ideogram-v3/${kind}$`),
    auth: true,
    authenticate,
    errorBody: errorFor,
    handle: (ctx: SimContext) => handle(ctx, kind),
  }));
}

import { readFile } from 'node:fs/promises';
import { GatewayError, errors } from '../../http/errors.js';
import { MIME } from '../../http/image-type.js';
import type { Target } from '../../upstream/target.js';
import type { EditInput, ImageModelCaps, ImageParams } from '../image-types.js';
import { imageBytes, type ImageBytes } from '../video-support.js';
import type { ImageManifest, ImageModelSpec, Manifest, OtherFieldsSpec } from './manifest.js';
import { modelFacts } from './models.js';
import type { OnDisk } from './template.js';

// The request side of a manifest's images capability: the OpenAI Images request checked against
// what the model accepts (each refusal a 400 naming the allowed values, before any upstream call)
// and turned into neutral values the manifest's templates read.

export type ImageOperation = 'generate' | 'edit';

/** An image model's facts: model_defaults.image under the entry's own. */
export function imageFacts(m: Manifest, model: string): ImageModelSpec & { facts: Record<string, unknown> } {
  const f = modelFacts(m, model);
  const entry = m.models.find((e) => e.id === model) ?? m.models.find((e) => e.match !== undefined && new RegExp(e.match).test(model));
  return { ...m.model_defaults?.image, ...entry?.image, facts: f.facts };
}

/** The OpenAI Images request in neutral terms. */
export interface ImageRequest {
  operation: ImageOperation;
  prompt: string;
  n: number;
  size?: string;
  width?: number;
  height?: number;
  aspect_ratio?: string;
  resolution?: string;
  quality?: string;
  seed?: number;
  negative_prompt?: string;
  output_format?: string;
  /** Input images: edit uploads, or a generation's `image` references (URLs). */
  images: { url?: string; path?: string; size?: number; type?: keyof typeof MIME }[];
  mask?: { path: string; size: number; type: keyof typeof MIME };
  response_format?: string;
  user?: string;
  extra: Record<string, unknown>;
  /** Client fields `other_fields` passes on unchanged. */
  passed: Record<string, unknown>;
}

const KNOWN = new Set(['seed', 'negative_prompt', 'output_format', 'aspect_ratio', 'image']);

const list = (xs: readonly (string | number)[]) => xs.join(', ');
const refuse = (param: string, message: string) => errors.invalidRequest(message, param);
const unsupported = (param: string, message: string) => new GatewayError(400, 'unsupported_parameter', message, {}, param);

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}

/** Multipart fields are text: a number or an integer given as text is read as one. */
function numberOf(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && /^-?\d+$/.test(v.trim())) return Number(v.trim());
  return undefined;
}

function sizeTable(f: ImageModelSpec): Record<string, string> | undefined {
  if (!f.sizes) return undefined;
  if (Array.isArray(f.sizes)) return Object.fromEntries(f.sizes.map((s) => [s, '']));
  return f.sizes;
}

function ratioOf(w: number, h: number): string {
  const g = gcd(w, h);
  return `${w / g}:${h / g}`;
}

/** size (`WxH`, `NK`, auto) and aspect_ratio, checked against the model's sizes, dimensions, resolutions and ratios. */
function shape(f: ImageModelSpec, name: string, size: string | undefined, ratio: unknown, out: ImageRequest): void {
  const table = sizeTable(f);
  const ratios = f.ratios ?? (table ? [...new Set(Object.values(table).filter(Boolean))] : undefined);
  const allowedSizes = () => [...(table ? Object.keys(table) : []), ...(f.resolutions ?? []), ...(f.dimensions ? [`WxH from ${f.dimensions.min} to ${f.dimensions.max} per side${f.dimensions.multiple_of ? `, multiples of ${f.dimensions.multiple_of}` : ''}`] : [])];
  if (ratio !== undefined) {
    if (typeof ratio !== 'string' || !/^\d{1,3}:\d{1,3}$/.test(ratio)) throw refuse('aspect_ratio', '`aspect_ratio` must be W:H, e.g. 16:9.');
    if (!ratios?.length) throw unsupported('aspect_ratio', `${name} takes no aspect_ratio; send a size (${list(allowedSizes())}).`);
    if (!ratios.includes(ratio)) throw refuse('aspect_ratio', `aspect_ratio must be one of ${list(ratios)} on ${name}.`);
    out.aspect_ratio = ratio;
  }
  const given = size === undefined || size === 'auto' ? f.default_size : size;
  if (given === undefined) return;
  const tier = /^[1-9]K$/.exec(given);
  if (tier) {
    if (!f.resolutions?.includes(given)) throw refuse('size', `size must be one of ${list(allowedSizes()) || 'auto'} on ${name}.`);
    out.resolution = given;
    out.size = given;
    return;
  }
  const [w, h] = given.split('x').map(Number);
  const d = f.dimensions;
  const inTable = table ? Object.hasOwn(table, given) : false;
  const free = d && w >= d.min && h >= d.min && w <= d.max && h <= d.max && (!d.multiple_of || (w % d.multiple_of === 0 && h % d.multiple_of === 0)) && (!d.max_pixels || w * h <= d.max_pixels);
  if ((table || d) && !inTable && !free) throw refuse('size', `size must be one of ${list(allowedSizes())} on ${name}.`);
  out.size = given;
  out.width = w;
  out.height = h;
  out.aspect_ratio ??= (table?.[given] || undefined) ?? ratioOf(w, h);
  if (ratio === undefined && ratios?.length && !ratios.includes(out.aspect_ratio)) throw refuse('size', `size must be one of ${list(allowedSizes())} on ${name} (aspect ratios ${list(ratios)}).`);
}

/** What `other_fields` does with a field: pass it on, drop it, or refuse it (the default). */
export function fateOf(o: OtherFieldsSpec | undefined, field: string): 'pass' | 'drop' | 'refuse' {
  if (!o || o.refuse?.includes(field)) return 'refuse';
  const named = (l: '*' | string[] | undefined) => l === '*' || (l ?? []).includes(field);
  return named(o.pass) ? 'pass' : named(o.drop) ? 'drop' : 'refuse';
}

/** Whether a generation's create body reads the input images (`{image}`, `{images}`). */
function generationReadsImages(m: ImageManifest): boolean {
  const all = Array.isArray(m.images.create) ? m.images.create : [m.images.create];
  return all.some((v) => {
    const op = v.when?.operation;
    const serves = !op || !('in' in op) || (op.in ?? []).includes('generate');
    return serves && /\{images?[|.}]/.test(JSON.stringify(v.body ?? {}));
  });
}

/** Whether the model's facts (and, for `image`, the manifest) say anything about a field the kit checks; else it is one of the other fields. */
function describes(m: ImageManifest, f: ImageModelSpec, field: string, operation: ImageOperation): boolean {
  switch (field) {
    case 'size':
      return !!(f.sizes || f.dimensions || f.resolutions || f.default_size || f.ratios);
    case 'aspect_ratio':
      return !!(f.ratios || f.sizes);
    case 'quality':
      return !!f.qualities;
    case 'seed':
      return !!f.seed;
    case 'negative_prompt':
      return !!f.negative_prompt;
    case 'output_format':
      return !!f.formats;
    case 'image':
      // A generation's `image` references: taken where a generation's body sends them.
      return (f.max_images ?? 0) > 0 && (operation === 'edit' || generationReadsImages(m));
    default:
      return false;
  }
}

/**
 * The neutral request of an OpenAI Images request on one model, or a 400 naming what the model
 * accepts. Extra fields the manifest does not list are refused, naming those it does, unless its
 * `other_fields` passes or drops them.
 */
export function imageRequest(m: ImageManifest, model: string, operation: ImageOperation, p: ImageParams, edit?: EditInput): ImageRequest {
  const f = imageFacts(m, model);
  const name = m.name;
  const ops = f.operations ?? ['generate', ...(variantsFor(m, 'edit') ? (['edit'] as const) : [])];
  if (!ops.includes(operation)) {
    if (operation === 'generate') throw unsupported('model', `${model} on ${name} edits images only: send it an image at POST /v1/images/edits.${generators(m)}`);
    throw unsupported('image', `${model} on ${name} cannot ${operation} images (it can: ${list(ops)}).`);
  }
  const extraNames = m.images.extra ?? [];
  const out: ImageRequest = { operation, prompt: p.prompt, n: p.n ?? 1, images: [], extra: {}, passed: {} };
  if (p.response_format !== undefined) out.response_format = p.response_format;
  if (p.user !== undefined) out.user = p.user;
  // The fields still to check: a field the manifest takes as extra goes as the client sent it, and
  // one the model does not describe goes where other_fields says (when it says pass or drop).
  const given: Record<string, unknown> = { ...p.extra, size: p.size, quality: p.quality };
  for (const k of Object.keys(given)) {
    const v = given[k];
    if (v === undefined || v === null) {
      delete given[k];
      continue;
    }
    if (extraNames.includes(k)) {
      out.extra[k] = v;
      delete given[k];
      continue;
    }
    if ((KNOWN.has(k) || k === 'size' || k === 'quality') && describes(m, f, k, operation)) continue;
    const fate = fateOf(m.images.other_fields, k);
    if (fate === 'refuse') continue;
    if (fate === 'pass') out.passed[k] = v;
    delete given[k];
  }
  const unknown = Object.keys(given).filter((k) => !KNOWN.has(k) && k !== 'size' && k !== 'quality');
  if (unknown.length) throw unsupported(unknown[0], `\`${unknown[0]}\` is not a parameter ${name} takes; besides model, prompt, n, size, quality, response_format and user it takes: ${list(['seed', 'negative_prompt', 'output_format', 'aspect_ratio', 'image', ...extraNames])}.`);
  const n = out.n;
  if (f.max_n !== undefined && n > f.max_n) throw refuse('n', `n must be from 1 to ${f.max_n} on ${model}.`);
  shape(f, model, given.size as string | undefined, given.aspect_ratio, out);
  const quality = given.quality as string | undefined;
  if (quality !== undefined && quality !== 'auto') {
    if (!f.qualities) throw unsupported('quality', `${model} on ${name} has no quality setting; leave quality unset or auto.`);
    if (!f.qualities.includes(quality)) throw refuse('quality', `quality must be one of auto, ${list(f.qualities)} on ${model}.`);
    out.quality = quality;
  }
  const seed = given.seed;
  if (seed !== undefined && seed !== null) {
    if (!f.seed) throw unsupported('seed', `${model} on ${name} takes no seed.`);
    const v = numberOf(seed);
    if (v === undefined || !Number.isInteger(v) || v < 0 || v > 4294967295) throw refuse('seed', '`seed` must be an integer from 0 to 4294967295.');
    out.seed = v;
  }
  const neg = given.negative_prompt;
  if (neg !== undefined && neg !== null) {
    if (!f.negative_prompt) throw unsupported('negative_prompt', `${model} on ${name} takes no negative_prompt.`);
    if (typeof neg !== 'string') throw refuse('negative_prompt', '`negative_prompt` must be a string.');
    out.negative_prompt = neg;
  }
  const fmt = given.output_format;
  if (fmt !== undefined && fmt !== null) {
    const formats = f.formats ?? ['png'];
    if (typeof fmt !== 'string' || !formats.includes(fmt)) throw refuse('output_format', `output_format must be one of ${list(formats)} on ${model}.`);
    out.output_format = fmt;
  }
  const refs = given.image;
  if (refs !== undefined && refs !== null) {
    const urls = Array.isArray(refs) ? refs : [refs];
    if (!urls.every((u) => typeof u === 'string' && /^(https?:\/\/|data:image\/)/.test(u))) throw refuse('image', '`image` must be an image URL (http(s) or data:image/…) or a list of them.');
    out.images = (urls as string[]).map((url) => ({ url }));
  }
  if (edit) {
    out.images = edit.images.map((img) => ({ path: img.path, size: img.size, type: img.type }));
    if (edit.mask) {
      if (!f.mask) throw unsupported('mask', `${model} on ${name} cannot edit with a mask; send the image(s) and the prompt without \`mask\`.`);
      out.mask = { path: edit.mask.path, size: edit.mask.size, type: edit.mask.type };
    }
  }
  const maxImages = f.max_images ?? (operation === 'edit' ? 1 : 0);
  if (out.images.length > maxImages) {
    throw maxImages === 0 ? unsupported('image', `${model} on ${name} takes no input images.`) : refuse('image', `${model} on ${name} takes at most ${maxImages} input image${maxImages === 1 ? '' : 's'}.`);
  }
  return out;
}

/** The provider's models that draw from text alone, as a sentence (empty when it has none). */
function generators(m: ImageManifest): string {
  const ids = m.models.filter((e) => e.id && e.image && (imageFacts(m, e.id).operations ?? ['generate']).includes('generate')).map((e) => e.id!);
  return ids.length ? ` ${m.name} models that generate from text: ${list(ids)}.` : '';
}

/** What a model accepts, from the same facts imageRequest checks a request against. */
export function imageCaps(m: ImageManifest, model: string): ImageModelCaps {
  const f = imageFacts(m, model);
  const table = sizeTable(f);
  const ratios = f.ratios ?? (table ? [...new Set(Object.values(table).filter(Boolean))] : undefined);
  const sizes = table || f.resolutions ? [...(table ? Object.keys(table) : []), ...(f.resolutions ?? [])] : undefined;
  const caps: ImageModelCaps = { operations: [...(f.operations ?? ['generate', ...(variantsFor(m, 'edit') ? (['edit'] as const) : [])])] };
  if (sizes) caps.sizes = sizes;
  if (f.dimensions) caps.dimensions = { ...f.dimensions };
  if (ratios?.length) caps.aspect_ratios = ratios;
  if (f.qualities) caps.qualities = ['auto', ...f.qualities];
  if (f.max_n !== undefined) caps.max_n = f.max_n;
  caps.output_formats = f.formats ?? ['png'];
  caps.max_input_images = f.max_images ?? (caps.operations!.includes('edit') ? 1 : 0);
  caps.mask = f.mask === true;
  return caps;
}

/** The manifest's create variants that can serve an operation (none: the manifest has no such call). */
export function variantsFor(m: ImageManifest, operation: ImageOperation): boolean {
  const all = Array.isArray(m.images.create) ? m.images.create : [m.images.create];
  return all.some((v) => {
    const op = v.when?.operation;
    return !op || !('in' in op) || (op.in ?? []).includes(operation);
  });
}

/** The request's uploads on disk (and mask, last), by index: sent as file parts without being read. */
export function uploadsOnDisk(req: ImageRequest): Map<number, OnDisk> {
  const out = new Map<number, OnDisk>();
  [...req.images, ...(req.mask ? [req.mask] : [])].forEach((img, i) => {
    if (img.path && img.type) out.set(i, { path: img.path, size: img.size ?? 0, mimeType: MIME[img.type] });
  });
  return out;
}

/** The bytes of the request's input images (and mask, last), for a manifest that sends them inline. */
export async function inputBytes(m: ImageManifest, target: Target, req: ImageRequest, signal?: AbortSignal): Promise<Map<number, ImageBytes>> {
  const types = m.images.inline_images?.types;
  const all = [...req.images, ...(req.mask ? [req.mask] : [])];
  const got = await Promise.all(
    all.map(async (img, i): Promise<[number, ImageBytes]> => {
      if (img.path && img.type) return [i, { mimeType: MIME[img.type], base64: (await readFile(img.path)).toString('base64') }];
      const where = `image[${i}]`;
      const bytes = await imageBytes(target, (img as { url?: string }).url ?? '', where, signal);
      if (types && !types.includes(bytes.mimeType)) throw refuse('image', `${where} is ${bytes.mimeType}; ${m.name} takes ${list(types)}.`);
      return [i, bytes];
    }),
  );
  return new Map(got);
}

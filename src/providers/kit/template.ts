import { fieldTooDeep, readJsonField } from '../../http/json-field.js';
import { urlOrRawBase64, type ImageBytes } from '../video-support.js';
import type { VideoGenerationRequest, VideoImage } from '../video-types.js';
import { absent, at } from './values.js';

// Manifest templates: JSON whose strings may be `{placeholders}` of the neutral request, with a
// fixed set of transforms (`{resolution|upper}`). A field whose placeholder has no value is left
// out, and so is an object or list all of whose placeholders had none: the body carries what the
// client gave, nothing empty.

/** One of the client's images, with its place in the request (for messages naming `images[i]`). */
export class ImageRef {
  constructor(
    readonly url: string,
    readonly role: VideoImage['role'],
    readonly index: number,
  ) {}
}

export interface RequestScope {
  model: string;
  req: VideoGenerationRequest;
  callbackUrl?: string;
  facts: Record<string, unknown>;
  /** The frame size (`WxH`) the request's resolution and ratio stand for, when it gives either. */
  frameSize?: string;
  maps: Record<string, Record<string, string>>;
  /** Image bytes fetched for inlining, by the image's index. */
  fetched?: Map<number, ImageBytes>;
  /** Uploads on disk, by the image's index: the `file` transform streams them instead of reading them. */
  files?: Map<number, OnDisk>;
  /** The current item of a `$each`. */
  item?: unknown;
  /** The channel's settings, defaults applied (`{settings.<name>}`). */
  settings?: Record<string, string>;
  /** The names of another capability's request (images): read here instead of `req`. */
  lookup?: (name: string) => unknown;
  /** Provider ids of the client's images uploaded first, by the image's index (hook: image upload). */
  uploaded?: Map<number, unknown>;
  /** The model's own length when the request gives none (`default_duration`). */
  defaultDuration?: number;
}

/** An uploaded file on disk. */
export interface OnDisk {
  path: string;
  size: number;
  mimeType: string;
}

/** A file part of a multipart body (the `file` transform): the bytes (or the file on disk) and their type. */
export class FileValue {
  constructor(
    readonly bytes: Buffer | undefined,
    readonly mimeType: string,
    readonly filename: string,
    readonly onDisk?: OnDisk,
  ) {}
}

export const TRANSFORMS = ['upper', 'lower', 'string', 'number', 'map', 'replace', 'raw_base64', 'base64', 'mime', 'data_url', 'file', 'segments', 'or', 'uploaded', 'json', 'single'] as const;
/** Transforms that need the image's bytes (fetched before the body is built). */
export const FETCHING = new Set(['base64', 'mime', 'data_url', 'file']);

const PARAMS = new Set(['resolution', 'ratio', 'duration', 'fps', 'seed', 'camera_fixed', 'watermark', 'generate_audio', 'draft', 'service_tier', 'execution_expires_after', 'return_last_frame']);

/** The neutral names a placeholder or a condition may read. */
export function isRequestName(name: string): boolean {
  return ['model', 'prompt', 'mode', 'callback_url', 'frame_size', 'default_duration', 'images', 'item', 'count', 'id', 'file', 'value', 'variant'].includes(name) || PARAMS.has(name) || /^(image|images|metadata|facts|item|task|settings)\.[A-Za-z0-9_.-]+$/.test(name);
}

/** A neutral value of the request by name (lists are empty, never absent, so conditions can count them). */
export function requestValue(s: RequestScope, name: string): unknown {
  if (s.lookup) return name === 'item' ? s.item : name.startsWith('item.') ? at(s.item, name.slice(5)) : s.lookup(name);
  const images = () => s.req.images.map((img, i) => new ImageRef(img.url, img.role, i));
  if (name === 'model') return s.model;
  if (name === 'prompt') return s.req.prompt;
  if (name === 'mode') return s.req.mode;
  if (name === 'callback_url') return s.callbackUrl;
  if (name === 'frame_size') return s.frameSize;
  if (name === 'default_duration') return s.defaultDuration;
  if (name === 'images') return images();
  if (name === 'item') return s.item;
  if (PARAMS.has(name)) return (s.req.params as Record<string, unknown>)[name];
  const dot = name.indexOf('.');
  const head = name.slice(0, dot);
  const rest = name.slice(dot + 1);
  if (head === 'image') return images().find((i) => i.role === rest);
  if (head === 'images') return images().filter((i) => i.role === rest);
  if (head === 'metadata') return at(s.req.metadata, rest);
  if (head === 'facts') return s.facts[rest];
  if (head === 'item') return at(s.item, rest);
  if (head === 'settings') return s.settings?.[rest];
  return undefined;
}

function bytesOf(s: RequestScope, v: unknown): ImageBytes {
  const got = v instanceof ImageRef ? s.fetched?.get(v.index) : undefined;
  if (!got) throw new Error('an image was inlined without being fetched first');
  return got;
}

/**
 * Text that holds JSON (a number, true/false, an object or a list) as that value: a multipart
 * field is text, and a provider wants the typed value. Other text goes as it is, for the provider
 * to refuse in its own words; text nested past the body's depth limit is the client's 400.
 */
function jsonOf(v: unknown, field: string): unknown {
  if (typeof v !== 'string') return v;
  const parsed = readJsonField(v);
  if (!parsed.ok && parsed.problem === 'too_deep') throw fieldTooDeep(field);
  return parsed.ok && parsed.value !== null && typeof parsed.value !== 'string' ? parsed.value : v;
}

function transform(s: RequestScope, v: unknown, step: string, field = ''): unknown {
  if (v === undefined) return undefined;
  // `single`: a list of one is that one item (a provider taking a string or a list).
  if (step === 'single') return Array.isArray(v) && v.length === 1 ? v[0] : v;
  if (step === 'json') return jsonOf(v, field);
  if (Array.isArray(v)) return v.map((x) => transform(s, x, step, field));
  const [name, ...args] = step.split(':');
  const url = v instanceof ImageRef ? v.url : undefined;
  switch (name) {
    case 'upper':
      return String(v).toUpperCase();
    case 'lower':
      return String(v).toLowerCase();
    case 'string':
      return url ?? String(v);
    case 'number': {
      const n = Number(v);
      return url === undefined && Number.isFinite(n) ? n : undefined;
    }
    case 'map':
      return s.maps[args[0]]?.[String(v)];
    case 'replace':
      return String(url ?? v).split(args[0]).join(args[1] ?? '');
    case 'raw_base64':
      return urlOrRawBase64(url ?? String(v));
    case 'base64':
      return bytesOf(s, v).base64;
    case 'mime':
      return bytesOf(s, v).mimeType;
    case 'uploaded': {
      const id = v instanceof ImageRef ? s.uploaded?.get(v.index) : undefined;
      if (id === undefined) throw new Error('an image id was sent without the image being uploaded first');
      return id;
    }
    case 'data_url': {
      const b = bytesOf(s, v);
      return `data:${b.mimeType};base64,${b.base64}`;
    }
    case 'file': {
      const index = v instanceof ImageRef ? v.index : 0;
      const disk = s.files?.get(index);
      if (disk) return new FileValue(undefined, disk.mimeType, `image-${index + 1}.${disk.mimeType.split('/')[1] ?? 'bin'}`, disk);
      const b = bytesOf(s, v);
      return new FileValue(Buffer.from(b.base64, 'base64'), b.mimeType, `image-${index + 1}.${b.mimeType.split('/')[1] ?? 'bin'}`);
    }
    default:
      return v;
  }
}

/** An image stands for its URL in the JSON sent. */
function plain(v: unknown): unknown {
  if (v instanceof ImageRef) return v.url;
  return Array.isArray(v) ? v.map(plain) : v;
}

const WHOLE = /^\{([^{}|]+)((?:\|[^{}|]+)*)\}$/;
const PART = /\{([^{}|]+)((?:\|[^{}|]+)*)\}/g;

/** The value of one placeholder (`name|t1|t2`), or undefined when it has none. */
function placeholder(s: RequestScope, name: string, steps: string, lookup: (name: string) => unknown): unknown {
  let v = lookup(name);
  for (const step of steps.split('|').filter(Boolean)) {
    // `or:NAME`: another value (a model's own default, `facts.<name>`) where this one has none.
    if (step.startsWith('or:')) v = absent(v) ? lookup(step.slice(3)) : v;
    else if (!absent(v)) v = transform(s, v, step, name.split('.').pop());
  }
  return absent(v) ? undefined : v;
}

/** Every placeholder in a string (name and transforms), for the load-time checks. */
export function placeholders(str: string): { name: string; steps: string[] }[] {
  return [...str.matchAll(PART)].map((m) => ({ name: m[1], steps: m[2].split('|').filter(Boolean) }));
}

/** A string with placeholders inside it: undefined when any of them has no value. */
export function interpolate(str: string, lookup: (name: string) => unknown, encode: (v: string, steps: string[]) => string = (v) => v, s?: RequestScope): string | undefined {
  let missing = false;
  const out = str.replace(PART, (_, name: string, steps: string) => {
    const v = s ? placeholder(s, name, steps, lookup) : lookup(name);
    if (absent(v)) {
      missing = true;
      return '';
    }
    return encode(String(plain(v)), steps.split('|').filter(Boolean));
  });
  return missing ? undefined : out;
}

interface Built {
  value: unknown;
  /** Placeholders met, and how many of them had a value. */
  seen: number;
  given: number;
}

function build(t: unknown, s: RequestScope): Built {
  const lookup = (name: string) => requestValue(s, name);
  if (typeof t === 'string') {
    const whole = WHOLE.exec(t);
    if (whole) {
      const v = placeholder(s, whole[1], whole[2], lookup);
      return { value: plain(v), seen: 1, given: v === undefined ? 0 : 1 };
    }
    if (!t.includes('{')) return { value: t, seen: 0, given: 0 };
    const v = interpolate(t, lookup, undefined, s);
    return { value: v, seen: 1, given: v === undefined ? 0 : 1 };
  }
  if (Array.isArray(t)) {
    const out: unknown[] = [];
    let seen = 0;
    let given = 0;
    for (const el of t) {
      const each = el && typeof el === 'object' && '$each' in el ? (el as { $each: string; $do: unknown }) : undefined;
      if (each) {
        const items = lookup(each.$each);
        seen++;
        if (Array.isArray(items) && items.length) given++;
        for (const item of Array.isArray(items) ? items : []) {
          const b = build(each.$do, { ...s, item });
          if (b.value !== undefined) out.push(b.value);
        }
        continue;
      }
      const b = build(el, s);
      seen += b.seen;
      given += b.given;
      if (b.value !== undefined) out.push(b.value);
    }
    return { value: seen > 0 && given === 0 ? undefined : out, seen, given };
  }
  if (t && typeof t === 'object') {
    const out: Record<string, unknown> = {};
    let seen = 0;
    let given = 0;
    for (const [k, el] of Object.entries(t)) {
      const b = build(el, s);
      seen += b.seen;
      given += b.given;
      if (b.value !== undefined) out[k] = b.value;
    }
    return { value: seen > 0 && given === 0 ? undefined : out, seen, given };
  }
  return { value: t, seen: 0, given: 0 };
}

/** A template filled from the request; undefined when nothing in it had a value. */
export function fill(t: unknown, s: RequestScope): unknown {
  return build(t, s).value;
}

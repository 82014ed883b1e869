import { errors } from '../../http/errors.js';
import { imageBytes, refuseParams, refuseReserved, type ImageBytes } from '../video-support.js';
import type { BillableUnits, VideoGenerationRequest, VideoParams } from '../video-types.js';
import type { Target } from '../../upstream/target.js';
import type { CreateVariant, VideoManifest } from './manifest.js';
import { frameSizeOf, modelFacts } from './models.js';
import { fill, interpolate, requestValue, type RequestScope } from './template.js';
import { at, holds } from './values.js';

// The request side of a manifest: checks beyond the model's caps, the credit estimate, and the
// create call (variant, path and body) built from the neutral request.

export function variants(m: VideoManifest): CreateVariant[] {
  return Array.isArray(m.videos.create) ? m.videos.create : [m.videos.create];
}

function scopeOf(m: VideoManifest, model: string, req: VideoGenerationRequest, callbackUrl?: string, fetched?: Map<number, ImageBytes>, uploaded?: Map<number, unknown>, settings?: Record<string, string>): RequestScope {
  const f = modelFacts(m, model);
  const { resolution, ratio } = req.params;
  const tier = resolution ?? f.default_resolution;
  const frameSize = (resolution !== undefined || ratio !== undefined) && tier ? frameSizeOf(m, tier, ratio ?? m.videos.estimate.ratio ?? '16:9') : undefined;
  return { model, req, callbackUrl, facts: f.facts, frameSize, maps: m.videos.maps ?? {}, fetched, uploaded, defaultDuration: f.default_duration, settings };
}

/** 400s for what the provider refuses beyond the model's caps, in the manifest's words. */
export function validateRequest(m: VideoManifest, model: string, req: VideoGenerationRequest): void {
  const v = m.videos;
  if (v.params) refuseParams(req, m.name, v.params as (keyof VideoParams)[]);
  const { ratio, resolution } = req.params;
  if (v.shape_from_image && ratio !== undefined && req.images.length > 0) throw errors.invalidRequest(`ratio applies to text-to-video only on ${m.name}: the image decides the shape.`, 'ratio');
  if (v.strict_ratios && ratio !== undefined) {
    const tier = resolution ?? modelFacts(m, model).default_resolution ?? '';
    const row = v.frame_sizes?.[tier];
    const allowed = row && typeof row === 'object' ? Object.keys(row) : [];
    if (!allowed.includes(ratio)) throw errors.invalidRequest(`ratio must be one of ${allowed.join(', ')} at ${tier}.`, 'ratio');
  }
  const s = scopeOf(m, model, req);
  for (const rule of v.rules ?? []) if (holds(rule.when, (name) => requestValue(s, name))) throw errors.invalidRequest(rule.message, rule.param);
  refuseReserved(req, v.metadata?.reserved ?? []);
}

const metaNum = (req: VideoGenerationRequest, field?: string) => {
  const v = field ? req.metadata[field] : undefined;
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : undefined;
};
const metaStr = (req: VideoGenerationRequest, field?: string) => {
  const v = field ? req.metadata[field] : undefined;
  return typeof v === 'string' ? v : undefined;
};

/** The credit hold: the requested (or default) seconds at the requested (or default) resolution, in the manifest's billing unit. */
export function estimateRequest(m: VideoManifest, model: string, req: VideoGenerationRequest): BillableUnits {
  const e = m.videos.estimate;
  const f = modelFacts(m, model);
  const fps = f.fps?.[0] ?? 24;
  const frames = metaNum(req, e.metadata?.frames);
  let seconds = req.params.duration ?? metaNum(req, e.metadata?.duration) ?? (frames ? Math.ceil(frames / fps) : undefined) ?? f.default_duration ?? e.duration;
  if (e.max_duration !== undefined) seconds = Math.min(seconds, e.max_duration);
  const fromMeta = metaStr(req, e.metadata?.resolution);
  const metaResolution = fromMeta !== undefined && e.metadata?.resolution_map ? e.metadata.resolution_map[fromMeta] : fromMeta;
  const resolution = req.params.resolution ?? metaResolution ?? e.resolution ?? f.default_resolution ?? '';
  if (e.unit === 'videos') return { unit: 'videos', units: 1 };
  if (e.unit === 'seconds') return { unit: 'seconds', units: seconds, ...(resolution ? { resolution } : {}) };
  const t = e.tokens ?? { divisor: 1024, fallback_resolution: resolution, fallback_ratio: '16:9' };
  const ratio = req.params.ratio ?? metaStr(req, e.metadata?.ratio) ?? e.ratio ?? t.fallback_ratio;
  const size = frameSizeOf(m, resolution, ratio) ?? frameSizeOf(m, resolution, t.fallback_ratio) ?? frameSizeOf(m, t.fallback_resolution, ratio) ?? frameSizeOf(m, t.fallback_resolution, t.fallback_ratio) ?? '0x0';
  const [w, h] = size.split('x').map(Number);
  return { unit: 'tokens', units: Math.floor((w * h * fps * seconds) / t.divisor), resolution };
}

/** Encodes a value for a URL: whole, or segment by segment with the `segments` transform (ids holding '/'). */
export function encodeForPath(v: string, steps: string[]): string {
  return steps.includes('segments') ? v.split('/').map(encodeURIComponent).join('/') : encodeURIComponent(v);
}

/** A path template filled from named values; every value it names must be there. */
export function pathOf(template: string, values: Record<string, unknown>): string {
  const path = interpolate(template, (name) => (name.startsWith('task.') ? at(values.task, name.slice(5)) : values[name]), encodeForPath);
  if (path === undefined) throw new Error(`a value of the path ${template} is missing`);
  return path;
}

/** A read or cancel body template filled with the task's kept id (`{id}`), for providers that read tasks by POST. */
export function bodyWith(template: unknown, values: Record<string, unknown>): unknown {
  if (typeof template === 'string') return interpolate(template, (name) => values[name]) ?? template;
  if (Array.isArray(template)) return template.map((t) => bodyWith(t, values));
  if (template && typeof template === 'object') return Object.fromEntries(Object.entries(template).map(([k, t]) => [k, bodyWith(t, values)]));
  return template;
}

export interface CreateCall {
  variant: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

function setAt(obj: Record<string, unknown>, path: string, value: Record<string, unknown>): void {
  const keys = path.split('.');
  let cur = obj;
  for (const k of keys.slice(0, -1)) {
    if (!cur[k] || typeof cur[k] !== 'object') cur[k] = {};
    cur = cur[k] as Record<string, unknown>;
  }
  cur[keys[keys.length - 1]] = value;
}

/** Puts metadata beside the gateway's fields (where the manifest says), the gateway's fields winning. */
function withMetadata(m: VideoManifest, req: VideoGenerationRequest, body: Record<string, unknown>): Record<string, unknown> {
  const spec = m.videos.metadata ?? {};
  const groups = new Map<string, Record<string, unknown>>();
  for (const [k, v] of Object.entries(req.metadata)) {
    if (spec.reserved?.includes(k)) continue;
    const into = spec.fields?.[k] ?? spec.into ?? '';
    groups.set(into, { ...groups.get(into), [k]: v });
  }
  let out = body;
  for (const [into, meta] of groups) {
    if (into === '') out = { ...meta, ...out };
    else {
      const cur = at(out, into);
      setAt(out, into, { ...meta, ...(cur && typeof cur === 'object' ? (cur as Record<string, unknown>) : {}) });
    }
  }
  return out;
}

/** The create call for a request: the first variant whose condition holds, its path and its filled body. */
export function createCall(m: VideoManifest, model: string, req: VideoGenerationRequest, callbackUrl?: string, fetched?: Map<number, ImageBytes>, uploaded?: Map<number, unknown>, settings?: Record<string, string>): CreateCall {
  const s = scopeOf(m, model, req, callbackUrl, fetched, uploaded, settings);
  const all = variants(m);
  const v = all.find((c) => !c.when || holds(c.when, (name) => requestValue(s, name))) ?? all[all.length - 1];
  const filled = fill(v.body ?? {}, s);
  const body = withMetadata(m, req, filled && typeof filled === 'object' ? (filled as Record<string, unknown>) : {});
  return { variant: v.name ?? '', method: v.method ?? 'POST', path: pathOf(v.path, { model }), headers: v.headers ?? {}, body };
}

/** The client's images as bytes, fetched together, for a manifest that inlines them. */
export async function fetchImages(m: VideoManifest, target: Target, req: VideoGenerationRequest, signal?: AbortSignal): Promise<Map<number, ImageBytes> | undefined> {
  const types = m.videos.inline_images?.types;
  if (!types) return undefined;
  const got = await Promise.all(
    req.images.map(async (img, i) => {
      const where = `images[${i}]`;
      const bytes = await imageBytes(target, img.url, where, signal);
      if (!types.includes(bytes.mimeType)) throw errors.invalidRequest(`${where} is ${bytes.mimeType}; ${m.name} takes ${types.join(', ')}.`, where);
      return [i, bytes] as const;
    }),
  );
  return new Map(got);
}


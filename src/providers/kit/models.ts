import type { ModelConfig, VideoModeName } from '../../config/schema.js';
import { resolutionOnly, sizesFromCaps, uniqueSizes } from '../video-sizes.js';
import type { VideoModelCaps, VideoSizeOption } from '../video-types.js';
import type { Manifest, ModelSpec, VideoManifest } from './manifest.js';

// A manifest's models: which entry an upstream model id falls under, what it accepts (caps), the
// frame sizes it renders, and the models the embedded default offers at their list prices.

export type ModelFacts = Omit<ModelSpec, 'id' | 'match' | 'offer'> & { facts: Record<string, unknown> };

/** The entry of a model id: its exact id, else the first `match` pattern it fits; model_defaults fill what an entry leaves out. */
export function modelFacts(m: Manifest, id: string): ModelFacts {
  const entry = m.models.find((e) => e.id === id) ?? m.models.find((e) => e.match !== undefined && new RegExp(e.match).test(id));
  const merged = { ...m.model_defaults, ...entry } as ModelSpec;
  return { ...merged, facts: { ...m.model_defaults?.facts, ...entry?.facts } };
}

export function capsOf(m: Manifest, id: string): VideoModelCaps {
  const f = modelFacts(m, id);
  const caps: VideoModelCaps = {};
  if (f.modes) caps.modes = [...f.modes];
  if (f.durations) caps.durations = [...f.durations];
  if (f.resolutions) caps.resolutions = [...f.resolutions];
  if (f.ratios) caps.ratios = [...f.ratios];
  if (f.fps) caps.fps = [...f.fps];
  if (f.audio !== undefined) caps.audio = f.audio;
  return caps;
}

/** The `WxH` of a resolution (and ratio) in the frame-size table, if it lists one. */
export function frameSizeOf(m: VideoManifest, resolution: string, ratio: string | undefined): string | undefined {
  const row = m.videos.frame_sizes?.[resolution];
  if (typeof row === 'string') return row;
  return row && ratio !== undefined ? row[ratio] : undefined;
}

/**
 * The sizes a model renders in a mode: the provider's own frame sizes at the model's resolutions,
 * then the usual ones of its caps (only at ratios the table has, when it has ratios); where the
 * image decides the shape, a size means its resolution only.
 */
export function sizesOf(m: VideoManifest, id: string, mode: VideoModeName): VideoSizeOption[] {
  const caps = capsOf(m, id);
  const table = m.videos.frame_sizes ?? {};
  const own: VideoSizeOption[] = (caps.resolutions ?? []).flatMap((resolution) => {
    const row = table[resolution];
    if (row === undefined) return [];
    if (typeof row === 'string') return [{ size: row, resolution }];
    return Object.entries(row).map(([ratio, size]) => ({ size, resolution, ratio }));
  });
  const usual = sizesFromCaps(caps).filter((o) => !o.ratio || table[o.resolution] === undefined || typeof table[o.resolution] === 'string' || frameSizeOf(m, o.resolution, o.ratio));
  const all = uniqueSizes([...own, ...usual]);
  return m.videos.shape_from_image && mode !== 'text' ? resolutionOnly(all) : all;
}

/** The models the embedded default offers on a channel of this type (entries with an `offer`). */
export function offeredModels(m: Manifest): Record<string, ModelConfig> {
  const out: Record<string, ModelConfig> = {};
  for (const e of m.models) {
    if (!e.id || !e.offer) continue;
    if (e.image || !m.videos) {
      out[e.id] = { kind: 'image', owned_by: m.owned_by, price: e.offer.price };
      continue;
    }
    const modes = e.offer.modes ?? modelFacts(m, e.id).modes;
    out[e.id] = { kind: 'video', owned_by: m.owned_by, ...(modes ? { modes: [...modes] } : {}), price: e.offer.price };
  }
  return out;
}

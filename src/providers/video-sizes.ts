import type { VideoModeName } from '../config/schema.js';
import type { VideoAdapter, VideoModelCaps, VideoSizeOption } from './video-types.js';

export type { VideoSizeOption };

// Frame sizes as the OpenAI Videos API names them (`size: "1280x720"`) and what each means in a
// model's own terms (resolution and ratio). Each adapter may list the sizes its model renders
// (`VideoAdapter.sizes`); without that list the sizes follow from the model's caps: every
// resolution at every ratio, short side = the resolution's lines.

const LINES: Record<string, number> = { '4k': 2160 };

/** Lines of a resolution name (`720p` → 720, `4k` → 2160); null when it names no height. */
export function linesOf(resolution: string): number | null {
  if (LINES[resolution.toLowerCase()]) return LINES[resolution.toLowerCase()];
  const m = /^(\d{3,4})p$/i.exec(resolution);
  return m ? Number(m[1]) : null;
}

/** `w:h` of a ratio name, or null for non-numeric ratios (`adaptive`, `keep_ratio`). */
function ratioParts(ratio: string): [number, number] | null {
  const m = /^(\d+):(\d+)$/.exec(ratio);
  return m ? [Number(m[1]), Number(m[2])] : null;
}

/** The size of a resolution at a ratio: the short side is the resolution's lines, the long side rounded to an even number. */
export function sizeFor(resolution: string, ratio: string): string | null {
  const lines = linesOf(resolution);
  const parts = ratioParts(ratio);
  if (!lines || !parts) return null;
  const [w, h] = parts;
  const long = Math.round((lines * Math.max(w, h)) / Math.min(w, h) / 2) * 2;
  return w >= h ? `${long}x${lines}` : `${lines}x${long}`;
}

/** Every resolution of the caps at every numeric ratio (16:9 and 9:16 when the model lists no ratios, resolution only then). */
export function sizesFromCaps(caps: VideoModelCaps): VideoSizeOption[] {
  const out: VideoSizeOption[] = [];
  const ratios = caps.ratios?.filter((r) => ratioParts(r));
  for (const resolution of caps.resolutions ?? []) {
    for (const ratio of ratios ?? ['16:9', '9:16']) {
      const size = sizeFor(resolution, ratio);
      if (size) out.push(ratios ? { size, resolution, ratio } : { size, resolution });
    }
  }
  return uniqueSizes(out);
}

/** The same sizes, each meaning its resolution only: where the image decides the shape. */
export function resolutionOnly(options: VideoSizeOption[]): VideoSizeOption[] {
  return options.map(({ size, resolution }) => ({ size, resolution }));
}

/** Keeps the first option of each size. */
export function uniqueSizes(options: VideoSizeOption[]): VideoSizeOption[] {
  const seen = new Set<string>();
  return options.filter((o) => !seen.has(o.size) && seen.add(o.size));
}

/** The sizes a model renders in a mode: the adapter's own list, else the one from its caps. */
export function videoSizes(adapter: VideoAdapter, upstreamModel: string, mode: VideoModeName): VideoSizeOption[] {
  return adapter.sizes?.(upstreamModel, mode) ?? sizesFromCaps(adapter.caps(upstreamModel));
}

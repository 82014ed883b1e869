import type { ImageUnits } from '../limits/pricing.js';
import type { ImageParams, ImagesBilled } from '../providers/image-types.js';

// The units an image request is held and charged by: the most n images may cost before the call,
// and what the images made (or a finished task's) came to, in whatever unit the model is priced in.

/** Output tokens one image is held at on a model priced per token (Gemini bills 1,290 at 1K and 2,000 at 4K). */
const HOLD_TOKENS_PER_IMAGE = 2000;

/** Megapixels of a size (`WxH`, or a `NK` tier); a size the request leaves to the provider counts as `fallback`. */
function megapixels(size: string | undefined, fallback: number): number {
  const wh = /^(\d+)x(\d+)$/.exec(size ?? '');
  if (wh) return (Number(wh[1]) * Number(wh[2])) / 1e6;
  const tier = /^([1-9])K$/.exec(size ?? '');
  return tier ? (1024 * Number(tier[1])) ** 2 / 1e6 : fallback;
}

/** What n images may cost at most (the hold), in the unit the model is priced in. */
export function holdUnits(params: ImageParams): ImageUnits {
  const n = params.n ?? 1;
  return {
    images: n,
    size: params.size,
    quality: params.quality,
    n,
    megapixels: n * megapixels(params.size, 4.2),
    inputTokens: Math.ceil(params.prompt.length / 2),
    outputTokens: n * HOLD_TOKENS_PER_IMAGE,
  };
}

/** The part of a request its images are priced by (kept with a request settled later). */
export interface PricedBy {
  size?: string;
  quality?: string;
  n?: number;
}

/** What the images returned (or a finished task's) cost: the provider's billed units where it reports them. */
export function spentUnits(params: PricedBy, images: number, billed: ImagesBilled | undefined): ImageUnits {
  const tokens = billed?.outputTokens !== undefined || billed?.inputTokens !== undefined;
  return {
    images: billed?.images ?? images,
    size: params.size,
    quality: params.quality,
    n: params.n ?? 1,
    megapixels: billed?.megapixels ?? (billed?.images ?? images) * megapixels(params.size, 1.05),
    ...(tokens ? { inputTokens: billed?.inputTokens ?? 0, outputTokens: billed?.outputTokens ?? 0 } : {}),
  };
}

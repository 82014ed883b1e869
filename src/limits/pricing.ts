import type { ModelConfig } from '../config/schema.js';
import type { BillableUnits } from '../providers/video-types.js';

// The arithmetic of every price unit. Prices are USD; costs are micro-dollars, rounded up. Which
// unit a video model bills in, and how many units a task used, is its provider adapter's to say.

export function chatCostMicros(model: ModelConfig, inputTokens: number, outputTokens: number): number {
  const p = model.price ?? {};
  return Math.ceil(inputTokens * (p.input_per_million ?? 0) + outputTokens * (p.output_per_million ?? 0));
}

/** What an images request produced (or may produce, for the hold), in every unit an image model may bill. */
export interface ImageUnits {
  images: number;
  /** The size asked for (`WxH` or `1K`…) and the quality: keys of a per_image table. */
  size?: string;
  quality?: string;
  /** Output pixels in millions, all images together. */
  megapixels?: number;
  /** Tokens the provider billed (models priced per token). */
  inputTokens?: number;
  outputTokens?: number;
}

/**
 * The per-image rate for a size and quality: a table is looked up by "quality size", then size,
 * then quality; a table without the request's key takes its highest rate, so a hold never falls short.
 */
export function perImageRate(price: ModelConfig['price'], size?: string, quality?: string): number {
  const rate = price?.per_image;
  if (rate === undefined) return 0;
  if (typeof rate === 'number') return rate;
  const keys = [quality && size ? `${quality} ${size}` : '', size ?? '', quality ?? ''].filter(Boolean).map((k) => k.toLowerCase());
  for (const k of keys) {
    const hit = Object.entries(rate).find(([key]) => key.toLowerCase() === k);
    if (hit) return hit[1];
  }
  return Math.max(0, ...Object.values(rate));
}

/**
 * The cost of images in the unit the model is priced in: tokens when it has token prices and the
 * provider reported tokens, else megapixels when it has a per-megapixel price, else images.
 */
export function imageCostMicros(model: ModelConfig, units: number | ImageUnits): number {
  const u = typeof units === 'number' ? { images: units } : units;
  const p = model.price ?? {};
  const tokenPriced = p.input_per_million !== undefined || p.output_per_million !== undefined;
  if (tokenPriced && (u.inputTokens !== undefined || u.outputTokens !== undefined)) return chatCostMicros(model, u.inputTokens ?? 0, u.outputTokens ?? 0);
  if (p.per_megapixel !== undefined && u.megapixels !== undefined) return Math.ceil(u.megapixels * p.per_megapixel * 1_000_000);
  return Math.ceil(u.images * perImageRate(p, u.size, u.quality) * 1_000_000);
}

/**
 * The per-second rate for a resolution. A table without that resolution (or a request that named
 * none) takes its highest rate, so an estimate never falls short.
 */
export function perSecondRate(price: ModelConfig['price'], resolution?: string): number {
  const rate = price?.per_second;
  if (rate === undefined) return 0;
  if (typeof rate === 'number') return rate;
  const want = resolution?.toLowerCase();
  const hit = Object.entries(rate).find(([k]) => k.toLowerCase() === want);
  return hit ? hit[1] : Math.max(0, ...Object.values(rate));
}

/** The cost of video units in the unit the model bills; a unit the model has no price for costs nothing. */
export function videoCostMicros(model: ModelConfig, b: BillableUnits): number {
  const p = model.price ?? {};
  switch (b.unit) {
    case 'tokens':
      return Math.ceil(b.units * (p.per_million_tokens ?? 0));
    case 'seconds':
      // A model priced per video is billed per video whatever unit its provider counts in.
      if (p.per_second === undefined && p.per_video !== undefined) return Math.ceil(p.per_video * 1_000_000);
      return Math.ceil(b.units * perSecondRate(p, b.resolution) * 1_000_000);
    case 'videos':
      return Math.ceil(b.units * (p.per_video ?? 0) * 1_000_000);
  }
}

import type { ModelConfig } from '../config/schema.js';
import type { BillableUnits } from '../providers/video-types.js';

// The arithmetic of every price unit. Prices are USD; costs are micro-dollars, rounded up. Which
// unit a video model bills in, and how many units a task used, is its provider adapter's to say.

export function chatCostMicros(model: ModelConfig, inputTokens: number, outputTokens: number): number {
  const p = model.price ?? {};
  return Math.ceil(inputTokens * (p.input_per_million ?? 0) + outputTokens * (p.output_per_million ?? 0));
}

export function imageCostMicros(model: ModelConfig, images: number): number {
  return Math.ceil(images * (model.price?.per_image ?? 0) * 1_000_000);
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

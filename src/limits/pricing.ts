import type { ModelConfig, PriceConfig, PriceFactor } from '../config/schema.js';
import type { BillableUnits } from '../providers/video-types.js';
import type { Principal } from '../auth/principal.js';
import { priceRatioOf } from './budgets.js';

// The price rule of a model, applied. A rule is data (models.<id>.price): a base rate in the unit
// the provider bills by, and factors that multiply it when the request matches. The same functions
// give a request's hold (from what it asks for) and its settle (from what the provider reported),
// each with the text a usage row keeps of what it was billed by. Prices are USD; costs are
// micro-dollars, rounded up. Which unit a video model bills in, and how many units a task used, is
// its provider adapter's to say.

/** A cost and how it was reached (`10 s × $0.05/s (720p) × 1.5 (audio)`). */
export interface Quote {
  micros: number;
  billedBy: string;
}

/** The request's values a factor may name (src/config/price-rule.ts lists them per model kind). */
export interface PriceContext {
  resolution?: string;
  duration?: number;
  /** Whether the request asked for audio; a request that leaves it out counts as false. */
  audio?: boolean;
  mode?: string;
  /**
   * Whether the request carries an input video (video-to-video, extend); absent counts as false.
   * No provider the gateway offers takes one through the neutral video request yet, so a create
   * leaves it out; a factor on it is checked at load and applies once a request sets it.
   */
  input_video?: boolean;
  size?: string;
  quality?: string;
  n?: number;
}

/**
 * The ratio every price the caller pays is multiplied by (its project's price ratio, else 1): the
 * one place it applies to the prices a client reads.
 */
export function callerPriceRatio(principal: Pick<Principal, 'priceRatio'> | null | undefined): number {
  return principal ? priceRatioOf(principal) : 1;
}

/** Micro-dollars rounded up, ignoring the float noise of a product that is a whole number (0.05 × 3 × 1e6). */
function ceilMicros(x: number): number {
  return Math.max(0, Math.ceil(x - 1e-6));
}

function num(n: number): string {
  return Number.isInteger(n) ? String(n) : String(+n.toFixed(4));
}

function usd(n: number): string {
  return `$${+n.toPrecision(6)}`;
}

function same(a: unknown, b: unknown): boolean {
  return typeof a === 'string' && typeof b === 'string' ? a.toLowerCase() === b.toLowerCase() : a === b;
}

/** Whether every dimension of a factor's `when` matches the request. */
function matches(when: PriceFactor['when'], ctx: PriceContext): boolean {
  for (const [name, want] of Object.entries(when)) {
    let got = (ctx as Record<string, unknown>)[name];
    if (name === 'audio' || name === 'input_video') got = got === true;
    if (got === undefined) return false;
    if (!(Array.isArray(want) ? want.some((w) => same(w, got)) : same(want, got))) return false;
  }
  return true;
}

function factorLabel(f: PriceFactor): string {
  if (f.label) return f.label;
  return Object.entries(f.when)
    .map(([k, v]) => (v === true ? k : v === false ? `no ${k}` : `${k} ${Array.isArray(v) ? v.join('|') : String(v)}`))
    .join(', ');
}

/** The base cost times every factor the request matches. */
function quote(price: PriceConfig | undefined, baseMicros: number, base: string, ctx: PriceContext): Quote {
  let micros = baseMicros;
  let text = base;
  for (const f of price?.factors ?? []) {
    if (!matches(f.when, ctx)) continue;
    micros *= f.multiply;
    text += ` × ${num(f.multiply)} (${factorLabel(f)})`;
  }
  return { micros: ceilMicros(micros), billedBy: text };
}

/** Of a request's input tokens, those the provider read from or wrote to its prompt cache. */
export interface CacheTokens {
  cached?: number;
  written?: number;
}

/**
 * The cost of a chat request's tokens. `input` counts every input token; the cached and written
 * ones among them take the model's `cached_input_per_million` and `cache_write_per_million`
 * (each the input rate when the price has none), the rest the input rate.
 */
export function chatQuote(model: ModelConfig, inputTokens: number, outputTokens: number, cache: CacheTokens = {}): Quote {
  const p = model.price ?? {};
  const inRate = p.input_per_million ?? 0;
  const outRate = p.output_per_million ?? 0;
  const cached = Math.min(cache.cached ?? 0, inputTokens);
  const written = Math.min(cache.written ?? 0, inputTokens - cached);
  const fresh = inputTokens - cached - written;
  const cachedRate = p.cached_input_per_million ?? inRate;
  const writeRate = p.cache_write_per_million ?? inRate;
  const parts = [`${fresh} input tokens × ${usd(inRate)}/M`];
  if (cached > 0) parts.push(`${cached} cached input tokens × ${usd(cachedRate)}/M`);
  if (written > 0) parts.push(`${written} cache write tokens × ${usd(writeRate)}/M`);
  parts.push(`${outputTokens} output tokens × ${usd(outRate)}/M`);
  return {
    micros: ceilMicros(fresh * inRate + cached * cachedRate + written * writeRate + outputTokens * outRate),
    billedBy: parts.join(' + '),
  };
}

/**
 * The hold of a chat request: its input bound at the highest input rate the model has (a cache
 * write may cost more than fresh input), its output cap at the output rate.
 */
export function chatHoldMicros(model: ModelConfig, inputTokens: number, outputTokens: number): number {
  const p = model.price ?? {};
  const inRate = Math.max(p.input_per_million ?? 0, p.cached_input_per_million ?? 0, p.cache_write_per_million ?? 0);
  return ceilMicros(inputTokens * inRate + outputTokens * (p.output_per_million ?? 0));
}

/** The cost in micro-dollars of a chat request's tokens. */
export function chatCostMicros(model: ModelConfig, inputTokens: number, outputTokens: number, cache: CacheTokens = {}): number {
  return chatQuote(model, inputTokens, outputTokens, cache).micros;
}

/** What an images request produced (or may produce, for the hold), in every unit an image model may bill. */
export interface ImageUnits {
  images: number;
  /** The size asked for (`WxH` or `1K`…) and the quality: keys of a per_image table. */
  size?: string;
  quality?: string;
  /** The images the request asked for (its `n`), for factors on n. */
  n?: number;
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
  return perImageEntry(price, size, quality).rate;
}

function perImageEntry(price: ModelConfig['price'], size?: string, quality?: string): { rate: number; key: string } {
  const rate = price?.per_image;
  if (rate === undefined) return { rate: 0, key: '' };
  if (typeof rate === 'number') return { rate, key: '' };
  const keys = [quality && size ? `${quality} ${size}` : '', size ?? '', quality ?? ''].filter(Boolean).map((k) => k.toLowerCase());
  for (const k of keys) {
    const hit = Object.entries(rate).find(([key]) => key.toLowerCase() === k);
    if (hit) return { rate: hit[1], key: hit[0] };
  }
  return { rate: Math.max(0, ...Object.values(rate)), key: 'highest rate' };
}

/**
 * The cost of images in the unit the model is priced in: tokens when it has token prices and the
 * provider reported tokens, else megapixels when it has a per-megapixel price, else images.
 */
export function imageQuote(model: ModelConfig, units: number | ImageUnits): Quote {
  const u = typeof units === 'number' ? { images: units } : units;
  const p = model.price ?? {};
  const ctx: PriceContext = { size: u.size, quality: u.quality, n: u.n };
  const tokenPriced = p.input_per_million !== undefined || p.output_per_million !== undefined;
  if (tokenPriced && (u.inputTokens !== undefined || u.outputTokens !== undefined)) {
    const tokens = chatQuote(model, u.inputTokens ?? 0, u.outputTokens ?? 0);
    return quote(p, (u.inputTokens ?? 0) * (p.input_per_million ?? 0) + (u.outputTokens ?? 0) * (p.output_per_million ?? 0), tokens.billedBy, ctx);
  }
  if (p.per_megapixel !== undefined && u.megapixels !== undefined) {
    return quote(p, u.megapixels * p.per_megapixel * 1_000_000, `${num(u.megapixels)} MP × ${usd(p.per_megapixel)}/MP`, ctx);
  }
  const { rate, key } = perImageEntry(p, u.size, u.quality);
  return quote(p, u.images * rate * 1_000_000, `${u.images} image${u.images === 1 ? '' : 's'} × ${usd(rate)}${key ? ` (${key})` : ''}`, ctx);
}

export function imageCostMicros(model: ModelConfig, units: number | ImageUnits): number {
  return imageQuote(model, units).micros;
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

/**
 * The cost of video units in the unit the model bills, times the factors the request matches
 * (`ctx`: the create request's values); a unit the model has no price for costs nothing.
 */
export function videoQuote(model: ModelConfig, b: BillableUnits, ctx: PriceContext = {}): Quote {
  const p = model.price ?? {};
  const at = { ...ctx, resolution: b.resolution ?? ctx.resolution };
  switch (b.unit) {
    case 'tokens':
      return quote(p, b.units * (p.per_million_tokens ?? 0), `${b.units} tokens × ${usd(p.per_million_tokens ?? 0)}/M`, at);
    case 'seconds': {
      // A model priced per video is billed per video whatever unit its provider counts in.
      if (p.per_second === undefined && p.per_video !== undefined) return quote(p, p.per_video * 1_000_000, `1 video × ${usd(p.per_video)}`, at);
      const rate = perSecondRate(p, b.resolution);
      const tier = typeof p.per_second === 'object' && b.resolution ? ` (${b.resolution})` : '';
      return quote(p, b.units * rate * 1_000_000, `${num(b.units)} s × ${usd(rate)}/s${tier}`, at);
    }
    case 'videos':
      return quote(p, b.units * (p.per_video ?? 0) * 1_000_000, `${b.units} video${b.units === 1 ? '' : 's'} × ${usd(p.per_video ?? 0)}`, at);
  }
}

export function videoCostMicros(model: ModelConfig, b: BillableUnits, ctx: PriceContext = {}): number {
  return videoQuote(model, b, ctx).micros;
}

/** A price rule as a client reads it (GET /v1/models/{id}): every rate in USD times the caller's ratio. */
export function pricingView(price: PriceConfig | undefined, ratio: number): Record<string, unknown> {
  const scale = (v: number) => +(v * ratio).toPrecision(12);
  const out: Record<string, unknown> = { currency: 'USD' };
  for (const [k, v] of Object.entries(price ?? {})) {
    if (k === 'factors') out.factors = v;
    else if (typeof v === 'number') out[k] = scale(v);
    else if (v && typeof v === 'object') out[k] = Object.fromEntries(Object.entries(v as Record<string, number>).map(([t, r]) => [t, scale(r)]));
  }
  return out;
}

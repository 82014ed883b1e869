import type { ModelKindName, PriceConfig } from './schema.js';

// The request dimensions a price factor may name, per model kind, and the check of a price rule
// against them (and of the rates only one kind takes). Pure data: the config loader and the
// provider-manifest loader both use it, so a bad rule is refused at load with the model, the field
// and the allowed values.

type DimensionType = 'string' | 'number' | 'boolean';

interface Dimension {
  type: DimensionType;
  /** The values a string dimension may take, when it has a fixed set. */
  values?: readonly string[];
}

export const VIDEO_MODES = ['text', 'first_frame', 'first_last_frame', 'reference_image'] as const;

export const FACTOR_DIMENSIONS: Record<ModelKindName, Record<string, Dimension>> = {
  video: {
    resolution: { type: 'string' },
    duration: { type: 'number' },
    audio: { type: 'boolean' },
    mode: { type: 'string', values: VIDEO_MODES },
    input_video: { type: 'boolean' },
  },
  image: {
    size: { type: 'string' },
    quality: { type: 'string' },
    n: { type: 'number' },
  },
  chat: {},
};

const article = (word: string) => (/^[aeiou]/.test(word) ? 'an' : 'a');

/** Rates only one model kind's price takes: the prompt-cache rates of chat models. */
const KIND_ONLY_RATES: Partial<Record<keyof PriceConfig, ModelKindName>> = {
  cached_input_per_million: 'chat',
  cache_write_per_million: 'chat',
};

/** What is wrong with a price rule for a model of `kind` (`field` relative to the price), or null. */
export function priceRuleProblem(kind: ModelKindName, price: PriceConfig | undefined): { field: string; message: string } | null {
  for (const [rate, only] of Object.entries(KIND_ONLY_RATES)) {
    if (price?.[rate as keyof PriceConfig] !== undefined && kind !== only) {
      return { field: rate, message: `only a ${only} model's price takes ${rate} (this model is kind ${kind})` };
    }
  }
  const dims = FACTOR_DIMENSIONS[kind];
  const names = Object.keys(dims);
  for (const [i, factor] of (price?.factors ?? []).entries()) {
    for (const [name, given] of Object.entries(factor.when)) {
      const field = `factors[${i}].when.${name}`;
      const dim = dims[name];
      if (!dim) return { field, message: names.length ? `${article(kind)} ${kind} model's factors may name ${names.join(', ')}` : `${article(kind)} ${kind} model's price takes no factors` };
      for (const v of Array.isArray(given) ? given : [given]) {
        if (typeof v !== dim.type) return { field, message: `must be a ${dim.type}${dim.type === 'boolean' ? '' : ' or a list of them'} (got ${JSON.stringify(v)})` };
        if (dim.values && !dim.values.includes(v as string)) return { field, message: `must be one of ${dim.values.join(', ')} (got ${JSON.stringify(v)})` };
        if (dim.type === 'number' && !((v as number) > 0)) return { field, message: `must be above 0 (got ${JSON.stringify(v)})` };
      }
    }
  }
  return null;
}

import type { ModelConfig } from '../../config/schema.js';

// The Ark models the embedded default offers. Prices are list prices at the time of writing, in
// USD; operators override them in their file.

export const SEEDANCE_MODELS: Record<string, ModelConfig> = {
  'doubao-seedance-1-0-pro-250528': { kind: 'video', owned_by: 'volcengine', modes: ['text', 'first_frame'], price: { per_million_tokens: 2.5 } },
  'doubao-seedance-1-0-pro-fast-251015': { kind: 'video', owned_by: 'volcengine', modes: ['text', 'first_frame'], price: { per_million_tokens: 1.0 } },
  'doubao-seedance-1-0-lite-t2v-250428': { kind: 'video', owned_by: 'volcengine', modes: ['text'], price: { per_million_tokens: 1.8 } },
  'doubao-seedance-1-0-lite-i2v-250428': {
    kind: 'video',
    owned_by: 'volcengine',
    modes: ['first_frame', 'first_last_frame', 'reference_image'],
    price: { per_million_tokens: 1.8 },
  },
  'doubao-seedance-1-5-pro-251215': {
    kind: 'video',
    owned_by: 'volcengine',
    modes: ['text', 'first_frame', 'first_last_frame'],
    price: { per_million_tokens: 2.4 },
  },
};

// Seedream image models (Ark images/generations), USD per generated image.
export const SEEDREAM_MODELS: Record<string, ModelConfig> = {
  'doubao-seedream-4-0-250828': { kind: 'image', owned_by: 'volcengine', price: { per_image: 0.03 } },
};

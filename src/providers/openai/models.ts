import type { ModelConfig } from '../../config/schema.js';

// The OpenAI models the embedded default offers when OPENAI_API_KEY is set (list prices, USD).
export const OPENAI_MODELS: Record<string, ModelConfig> = {
  'gpt-4o-mini': { kind: 'chat', owned_by: 'openai', price: { input_per_million: 0.15, output_per_million: 0.6 } },
  'gpt-4o': { kind: 'chat', owned_by: 'openai', price: { input_per_million: 2.5, output_per_million: 10 } },
  'gpt-image-1': { kind: 'image', owned_by: 'openai', price: { per_image: 0.04 } },
};

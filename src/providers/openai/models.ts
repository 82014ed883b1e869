import type { ModelConfig } from '../../config/schema.js';

// The OpenAI chat models the embedded default offers when OPENAI_API_KEY is set (list prices, USD);
// the image models are in manifest.yaml (`offer`).
export const OPENAI_MODELS: Record<string, ModelConfig> = {
  'gpt-4o-mini': { kind: 'chat', owned_by: 'openai', price: { input_per_million: 0.15, output_per_million: 0.6 } },
  'gpt-4o': { kind: 'chat', owned_by: 'openai', price: { input_per_million: 2.5, output_per_million: 10 } },
};

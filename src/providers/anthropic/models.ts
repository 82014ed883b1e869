import type { ModelConfig } from '../../config/schema.js';

// The Anthropic models the embedded default offers when ANTHROPIC_API_KEY is set (list prices, USD).
export const ANTHROPIC_MODELS: Record<string, ModelConfig> = {
  'claude-sonnet-4-5': { kind: 'chat', owned_by: 'anthropic', price: { input_per_million: 3, output_per_million: 15 } },
  'claude-haiku-4-5': { kind: 'chat', owned_by: 'anthropic', price: { input_per_million: 1, output_per_million: 5 } },
};

import type { ModelConfig } from '../../config/schema.js';

// The Veo models the embedded default offers. Prices are USD per second of video by resolution,
// list prices at the time of writing (Gemini API, paid tier); operators override them in their file.

const ALL_MODES: ModelConfig['modes'] = ['text', 'first_frame', 'first_last_frame', 'reference_image'];

export const VEO_DEFAULT_MODELS: Record<string, ModelConfig> = {
  'veo-3.1-generate-preview': { kind: 'video', owned_by: 'google', modes: ALL_MODES, price: { per_second: { '720p': 0.4, '1080p': 0.4, '4k': 0.6 } } },
  'veo-3.1-fast-generate-preview': { kind: 'video', owned_by: 'google', modes: ALL_MODES, price: { per_second: { '720p': 0.12, '1080p': 0.12, '4k': 0.3 } } },
  'veo-3.1-lite-generate-preview': { kind: 'video', owned_by: 'google', modes: ALL_MODES, price: { per_second: { '720p': 0.05, '1080p': 0.08 } } },
};

import type { ModelConfig } from '../../config/schema.js';

// The simulator's own models: what its GET /v1/models lists and what the embedded default offers
// under the simulator channel. Plain data, so the simulator itself may read it.
export const SIMULATOR_MODELS: Record<string, ModelConfig> = {
  // The simulator counts an image part as 85 input tokens.
  'sim-chat': { kind: 'chat', owned_by: 'simulator', price: { input_per_million: 0.5, output_per_million: 1.5 }, image_input_tokens: 85 },
  'sim-claude': { kind: 'chat', owned_by: 'simulator', price: { input_per_million: 3, output_per_million: 15 }, image_input_tokens: 85 },
  'sim-image': { kind: 'image', owned_by: 'simulator', price: { per_image: 0.02 } },
  'sim-video': {
    kind: 'video',
    owned_by: 'simulator',
    modes: ['text', 'first_frame', 'first_last_frame', 'reference_image'],
    price: { per_million_tokens: 1 },
  },
};

/**
 * Where the simulator serves the images its image generations return (`/__sim/files/WxH-seed.png`):
 * the one loopback place a client's image URL may point at, on a simulator channel only.
 */
export const SIMULATOR_IMAGE_FILES = '/__sim/files/';

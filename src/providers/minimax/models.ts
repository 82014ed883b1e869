import type { ModelConfig } from '../../config/schema.js';

// The Hailuo models the embedded default offers. MiniMax bills per video by model, resolution
// and length; here that is USD per second by resolution, list prices at the time of writing;
// operators override them in their file.

export const HAILUO_DEFAULT_MODELS: Record<string, ModelConfig> = {
  'MiniMax-Hailuo-02': { kind: 'video', owned_by: 'minimax', modes: ['text', 'first_frame', 'first_last_frame'], price: { per_second: { '512p': 0.017, '768p': 0.045, '1080p': 0.082 } } },
  'MiniMax-Hailuo-2.3': { kind: 'video', owned_by: 'minimax', modes: ['text', 'first_frame'], price: { per_second: { '768p': 0.047, '1080p': 0.082 } } },
  'MiniMax-Hailuo-2.3-Fast': { kind: 'video', owned_by: 'minimax', modes: ['first_frame'], price: { per_second: { '768p': 0.032, '1080p': 0.055 } } },
  'S2V-01': { kind: 'video', owned_by: 'minimax', modes: ['reference_image'], price: { per_second: { '720p': 0.108 } } },
};

import type { ModelConfig } from '../../config/schema.js';

// The Kling models the embedded default offers. Kling bills per video by model, mode and length;
// here that is USD per second by resolution (std = 720p, pro = 1080p), list prices at the time
// of writing; operators override them in their file.

const price = { per_second: { '720p': 0.056, '1080p': 0.098 } };

export const KLING_DEFAULT_MODELS: Record<string, ModelConfig> = {
  'kling-v2-6': { kind: 'video', owned_by: 'kuaishou', modes: ['text', 'first_frame', 'first_last_frame'], price },
  'kling-v2-5-turbo': { kind: 'video', owned_by: 'kuaishou', modes: ['text', 'first_frame', 'first_last_frame'], price: { per_second: { '720p': 0.042, '1080p': 0.07 } } },
  'kling-v2-1-master': { kind: 'video', owned_by: 'kuaishou', modes: ['text', 'first_frame'], price: { per_second: { '720p': 0.28, '1080p': 0.28 } } },
  'kling-v1-6': { kind: 'video', owned_by: 'kuaishou', modes: ['text', 'first_frame', 'first_last_frame'], price },
};

import type { ModelConfig } from '../../config/schema.js';

// The Wan models the embedded default offers. DashScope bills per second of output video by
// model and resolution; prices are USD list prices (international) at the time of writing;
// operators override them in their file.

export const WAN_DEFAULT_MODELS: Record<string, ModelConfig> = {
  'wan2.5-t2v-preview': { kind: 'video', owned_by: 'alibaba', modes: ['text'], price: { per_second: { '480p': 0.05, '720p': 0.1, '1080p': 0.15 } } },
  'wan2.5-i2v-preview': { kind: 'video', owned_by: 'alibaba', modes: ['first_frame'], price: { per_second: { '480p': 0.05, '720p': 0.1, '1080p': 0.15 } } },
  'wan2.2-kf2v-flash': { kind: 'video', owned_by: 'alibaba', modes: ['first_last_frame'], price: { per_second: { '480p': 0.015, '720p': 0.036, '1080p': 0.07 } } },
};

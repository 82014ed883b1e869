import type { ChannelConfig, ModelConfig } from './schema.js';

type Env = Record<string, string | undefined>;

// Prices are list prices at the time of writing, in USD; operators override them in their file.
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

export const OPENAI_MODELS: Record<string, ModelConfig> = {
  'gpt-4o-mini': { kind: 'chat', owned_by: 'openai', price: { input_per_million: 0.15, output_per_million: 0.6 } },
  'gpt-4o': { kind: 'chat', owned_by: 'openai', price: { input_per_million: 2.5, output_per_million: 10 } },
  'gpt-image-1': { kind: 'image', owned_by: 'openai', price: { per_image: 0.04 } },
};

export const ANTHROPIC_MODELS: Record<string, ModelConfig> = {
  'claude-sonnet-4-5': { kind: 'chat', owned_by: 'anthropic', price: { input_per_million: 3, output_per_million: 15 } },
  'claude-haiku-4-5': { kind: 'chat', owned_by: 'anthropic', price: { input_per_million: 1, output_per_million: 5 } },
};

/**
 * The configuration used when no file is given: SQLite, the in-process simulator (serving its own
 * models and the Seedance family, so the demo runs offline), and one real channel for each
 * provider key present in the environment.
 */
export function embeddedDefault(env: Env): Record<string, unknown> {
  const models: Record<string, ModelConfig> = { ...SIMULATOR_MODELS, ...SEEDANCE_MODELS, ...SEEDREAM_MODELS };
  const channels: Partial<ChannelConfig>[] = [
    { name: 'simulator', type: 'simulator', priority: 10, models: [...Object.keys(SIMULATOR_MODELS), ...Object.keys(SEEDANCE_MODELS), ...Object.keys(SEEDREAM_MODELS)] },
  ];
  if (env.OPENAI_API_KEY) {
    Object.assign(models, OPENAI_MODELS);
    channels.push({ name: 'openai', type: 'openai', base_url: 'https://api.openai.com/v1', api_key: env.OPENAI_API_KEY, models: Object.keys(OPENAI_MODELS) });
  }
  if (env.ANTHROPIC_API_KEY) {
    Object.assign(models, ANTHROPIC_MODELS);
    channels.push({ name: 'anthropic', type: 'anthropic', base_url: 'https://api.anthropic.com', api_key: env.ANTHROPIC_API_KEY, models: Object.keys(ANTHROPIC_MODELS) });
  }
  if (env.ARK_API_KEY) {
    // A real Ark channel outranks the simulator for the Seedance and Seedream models (lower priority value wins).
    channels.push({ name: 'ark', type: 'ark', base_url: 'https://ark.cn-beijing.volces.com', api_key: env.ARK_API_KEY, priority: 0, models: [...Object.keys(SEEDANCE_MODELS), ...Object.keys(SEEDREAM_MODELS)] });
  }
  return {
    server: { host: '127.0.0.1', port: 8080 },
    database: { url: 'sqlite:./data/mediagate.db' },
    simulator: { embedded: true, video_seconds: 10 },
    // A simulated task is queued for its first 2 s: polling every 5 s (the general default) would
    // go from SUBMITTED straight to IN_PROGRESS. Polls of the in-process simulator cost nothing.
    tasks: { poll_interval_ms: 1000, tick_ms: 250 },
    // Finished videos are kept next to the database, so /content outlives the provider's URL.
    storage: { type: 'local', dir: './data/videos' },
    channels,
    models,
  };
}

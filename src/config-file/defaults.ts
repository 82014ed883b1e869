import type { ChannelConfig, ModelConfig } from '../config/schema.js';
import { PROVIDERS } from '../providers/index.js';
import { simulator } from '../providers/simulator/index.js';

type Env = Record<string, string | undefined>;

// Model tables of the providers, re-exported for tests and benchmarks that build configs from them.
export { SIMULATOR_MODELS } from '../providers/simulator/wire.js';
export { SEEDANCE_MODELS } from '../providers/ark/models.js';
export { OPENAI_MODELS } from '../providers/openai/models.js';
export { ANTHROPIC_MODELS } from '../providers/anthropic/models.js';

/**
 * The configuration used when no file is given: SQLite, the in-process simulator (serving its own
 * models and those of every provider it plays offline, so the demo runs without keys), and one
 * real channel for each provider whose key is present in the environment. A real channel outranks
 * the simulator for the models both serve (lower priority value wins).
 */
export function embeddedDefault(env: Env): Record<string, unknown> {
  const simulated = PROVIDERS.filter((p) => p.defaults.simulated);
  const models: Record<string, ModelConfig> = { ...simulator.defaults.models };
  for (const p of simulated) Object.assign(models, p.defaults.models);
  const channels: Partial<ChannelConfig>[] = [{ name: 'simulator', type: 'simulator', priority: 10, models: Object.keys(models) }];
  for (const p of PROVIDERS) {
    const keyVar = p.defaults.env?.apiKey;
    if (!keyVar || !env[keyVar] || !Object.keys(p.defaults.models).length) continue;
    const secretVar = p.defaults.env?.apiSecret;
    if (secretVar && !env[secretVar]) continue;
    Object.assign(models, p.defaults.models);
    channels.push({
      name: p.type,
      type: p.type,
      base_url: p.defaults.baseUrl,
      api_key: env[keyVar],
      ...(secretVar ? { api_secret: env[secretVar] } : {}),
      priority: 0,
      models: Object.keys(p.defaults.models),
    });
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

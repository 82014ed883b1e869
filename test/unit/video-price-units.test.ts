import { describe, expect, it } from 'vitest';
import { videoCostMicros } from '../../src/limits/pricing.js';
import { validateConfig } from '../../src/config-file/loader.js';
import type { ModelConfig } from '../../src/config/schema.js';
import { providerTypes } from '../../src/providers/index.js';

// Every video price unit priced in one place: tokens, seconds (flat or by resolution) and videos.

const video = (price: ModelConfig['price']): ModelConfig => ({ kind: 'video', modes: ['text'], price });

describe('video price units', () => {
  it('prices tokens per million, seconds per second and videos per video, in micro-dollars rounded up', () => {
    expect(videoCostMicros(video({ per_million_tokens: 2.5 }), { unit: 'tokens', units: 102_960 })).toBe(257_400);
    expect(videoCostMicros(video({ per_second: 0.1 }), { unit: 'seconds', units: 5 })).toBe(500_000);
    expect(videoCostMicros(video({ per_video: 0.35 }), { unit: 'videos', units: 2 })).toBe(700_000);
  });

  it('takes the per-second rate of the resolution, case-insensitively, and the highest rate when the resolution is unknown', () => {
    const m = video({ per_second: { '720p': 0.1, '1080p': 0.15 } });
    expect(videoCostMicros(m, { unit: 'seconds', units: 10, resolution: '720P' })).toBe(1_000_000);
    expect(videoCostMicros(m, { unit: 'seconds', units: 10, resolution: '1080p' })).toBe(1_500_000);
    expect(videoCostMicros(m, { unit: 'seconds', units: 10 })).toBe(1_500_000);
  });

  it('charges nothing for a unit the model has no price in', () => {
    expect(videoCostMicros(video({ per_million_tokens: 1 }), { unit: 'seconds', units: 8 })).toBe(0);
  });

  it('accepts per_second as a number or a map and refuses anything else', () => {
    const base = { channels: [{ name: 's', type: 'simulator', base_url: 'http://x', models: ['v'] }] };
    expect(validateConfig({ ...base, models: { v: video({ per_second: { '720p': 0.1 } }) } }).models.v.price?.per_second).toEqual({ '720p': 0.1 });
    expect(() => validateConfig({ ...base, models: { v: { kind: 'video', modes: ['text'], price: { per_second: '0.1' } } } })).toThrow(/models\.v\.price\.per_second/);
  });
});

describe('channel type and api_secret', () => {
  it('lists the registered provider types for an unknown type', () => {
    // Every registered type, in registry order (each new provider adds its own).
    expect(() => validateConfig({ channels: [{ name: 'a', type: 'klingg', base_url: 'http://x', models: ['m'] }], models: { m: { kind: 'chat' } } })).toThrow(
      `channels[0].type: must be one of ${providerTypes().join(', ')} (got "klingg")`,
    );
    expect(providerTypes().slice(0, 7)).toEqual(['openai', 'anthropic', 'ark', 'gemini', 'kling', 'dashscope', 'minimax']);
  });

  it('takes api_secret from the environment like api_key', () => {
    const c = validateConfig({ channels: [{ name: 'a', type: 'ark', base_url: 'http://x', api_key: 'k', api_secret: 's3cret-value', models: ['m'] }], models: { m: { kind: 'chat' } } });
    expect(c.channels[0].api_secret).toBe('s3cret-value');
  });
});

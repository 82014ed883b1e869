import { describe, expect, it } from 'vitest';
import { videoCostMicros } from '../../src/limits/pricing.js';
import type { ModelConfig } from '../../src/config/schema.js';

// Veo, Kling, Wan and Hailuo count seconds; an operator may still price such a model per video
// (Kling and MiniMax sell per video). Without this a per_video price on them charged nothing.

const video = (price: ModelConfig['price']): ModelConfig => ({ kind: 'video', modes: ['text'], price });

describe('per_video price on a provider that counts seconds', () => {
  it('charges one video whatever the length', () => {
    expect(videoCostMicros(video({ per_video: 0.3 }), { unit: 'seconds', units: 5, resolution: '720p' })).toBe(300_000);
    expect(videoCostMicros(video({ per_video: 0.3 }), { unit: 'seconds', units: 10 })).toBe(300_000);
  });

  it('prefers a per_second price when both are set', () => {
    expect(videoCostMicros(video({ per_second: 0.1, per_video: 0.3 }), { unit: 'seconds', units: 10 })).toBe(1_000_000);
  });
});

import { describe, expect, it } from 'vitest';
import { checkVideoRequest } from '../../src/tasks/capabilities.js';
import { arkVideos } from '../../src/providers/ark/videos.js';
import { GatewayError } from '../../src/http/errors.js';
import type { VideoGenerationRequest } from '../../src/providers/video-types.js';

// A value the model's adapter does not accept is a 400 invalid_request that names the field and the allowed values.

const req = (params: VideoGenerationRequest['params'], mode: VideoGenerationRequest['mode'] = 'text'): VideoGenerationRequest => ({ prompt: 'p', mode, images: [], params, metadata: {} });

function refusal(fn: () => void): GatewayError {
  try {
    fn();
  } catch (err) {
    if (err instanceof GatewayError) return err;
    throw err;
  }
  throw new Error('expected a refusal');
}

describe('per-model video capabilities', () => {
  const check = (model: string, r: VideoGenerationRequest) => checkVideoRequest('m', ['text', 'first_frame'], arkVideos, model, r);

  it('names the allowed resolutions, ratios and frame rates', () => {
    const e = refusal(() => check('doubao-seedance-1-0-pro-250528', req({ resolution: '4k' })));
    expect([e.status, e.code, e.param]).toEqual([400, 'invalid_request', 'resolution']);
    expect(e.message).toMatch(/resolution must be one of 480p, 720p, 1080p for model "m"/);
    expect(refusal(() => check('x', req({ ratio: 'wide' }))).message).toMatch(/ratio must be one of 16:9, .*21:9/);
    expect(refusal(() => check('x', req({ fps: 30 }))).message).toMatch(/fps must be one of 24/);
  });

  it('gives durations per model as a range: Seedance 1.0 from 2 s, 1.5 pro from 4 s', () => {
    expect(() => check('doubao-seedance-1-0-pro-250528', req({ duration: 2 }))).not.toThrow();
    expect(refusal(() => check('doubao-seedance-1-5-pro-251215', req({ duration: 2 }))).message).toMatch(/duration must be from 4 to 12 seconds/);
  });

  it('refuses a mode the model is not configured for with unsupported_mode', () => {
    expect(refusal(() => checkVideoRequest('m', ['text'], arkVideos, 'x', req({}, 'first_frame'))).code).toBe('unsupported_mode');
  });
});

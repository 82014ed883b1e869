import { describe, expect, it } from 'vitest';
import { providerFor } from '../../src/providers/index.js';
import { sizeFor, sizesFromCaps, videoSizes } from '../../src/providers/video-sizes.js';
import { nativeVideoBody } from '../../src/tasks/openai-videos.js';
import type { VideoBinding } from '../../src/tasks/binding.js';

// How the Videos API's `size` and `seconds` become each provider's own terms.

const judge = (type: string, upstreamModel: string) => ({ adapter: providerFor(type)!.videos!, target: { upstreamModel } }) as unknown as VideoBinding;
const map = (type: string, model: string, fields: Record<string, unknown>) => nativeVideoBody({ model, prompt: 'x', ...fields }, model, judge(type, model));

describe('Videos API sizes', () => {
  it('derives the usual sizes from resolution and ratio', () => {
    expect(sizeFor('720p', '16:9')).toBe('1280x720');
    expect(sizeFor('1080p', '9:16')).toBe('1080x1920');
    expect(sizeFor('4k', '16:9')).toBe('3840x2160');
    expect(sizeFor('480p', '16:9')).toBe('854x480');
    expect(sizeFor('720p', 'adaptive')).toBeNull();
    expect(sizesFromCaps({ resolutions: ['720p'], ratios: ['16:9', '1:1', 'adaptive'] })).toEqual([
      { size: '1280x720', resolution: '720p', ratio: '16:9' },
      { size: '720x720', resolution: '720p', ratio: '1:1' },
    ]);
  });

  it('maps a size to each provider’s resolution and ratio', () => {
    expect(map('ark', 'doubao-seedance-1-0-pro-250528', { size: '1248x704', seconds: '5' })).toMatchObject({ resolution: '720p', ratio: '16:9', duration: 5 });
    expect(map('ark', 'doubao-seedance-1-0-pro-250528', { size: '1280x720' })).toMatchObject({ resolution: '720p', ratio: '16:9' });
    expect(map('gemini', 'veo-3.1-generate-preview', { size: '2160x3840' })).toMatchObject({ resolution: '4k', ratio: '9:16' });
    expect(map('kling', 'kling-v2-6', { size: '1080x1080' })).toMatchObject({ resolution: '1080p', ratio: '1:1' });
    // From an image the image decides the shape: the size picks the resolution only.
    const fromImage = map('kling', 'kling-v2-6', { size: '1080x1080', image: 'https://example.com/a.png' });
    expect(fromImage.resolution).toBe('1080p');
    expect(fromImage.ratio).toBeUndefined();
    expect(map('dashscope', 'wan2.5-t2v-preview', { size: '832x480' })).toMatchObject({ resolution: '480p', ratio: '16:9' });
    expect(map('minimax', 'MiniMax-Hailuo-02', { size: '1366x768' })).toMatchObject({ resolution: '768p' });
    expect(map('minimax', 'MiniMax-Hailuo-02', { size: '1366x768' }).ratio).toBeUndefined();
  });

  it('lists only sizes the model renders', () => {
    const wan480 = videoSizes(providerFor('dashscope')!.videos!, 'wan2.5-t2v-preview', 'text').filter((o) => o.resolution === '480p');
    // DashScope has no 4:3 at 480P: neither its own 480P sizes nor the usual ones offer it.
    expect(new Set(wan480.map((o) => o.ratio))).toEqual(new Set(['16:9', '9:16', '1:1']));
    expect(wan480.map((o) => o.size)).toContain('832x480');
    expect(videoSizes(providerFor('gemini')!.videos!, 'veo-3.1-lite-generate-preview', 'text').map((o) => o.size)).not.toContain('3840x2160');
    expect(() => map('gemini', 'veo-3.1-lite-generate-preview', { size: '3840x2160' })).toThrow(/size must be one of/);
    expect(() => map('kling', 'kling-v2-6', { seconds: '7' })).toThrow(/seconds must be one of "5", "10"/);
  });
});

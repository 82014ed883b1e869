import { describe, expect, it } from 'vitest';
import { patternImage } from '../../src/simulator/png.js';
import { veoCreateBody } from '../../src/providers/gemini/videos.js';
import { klingCreate } from '../../src/providers/kling/videos.js';
import { wanCreate } from '../../src/providers/dashscope/videos.js';
import { hailuoCreateBody } from '../../src/providers/minimax/videos.js';
import type { VideoGenerationRequest } from '../../src/providers/video-types.js';
import type { Target } from '../../src/upstream/target.js';

// How the gateway's create body maps to each provider's request: prompt, images by role,
// duration / resolution / ratio / seed, and metadata passed through beside the gateway's fields.

const req = (over: Partial<VideoGenerationRequest>): VideoGenerationRequest => ({ prompt: 'a corgi', mode: 'text', images: [], params: {}, metadata: {}, ...over });
const target = { channel: { name: 'c', type: 'gemini' }, baseUrl: 'https://example.com', apiKey: 'k', apiSecret: '', upstreamModel: 'm' } as unknown as Target;
const png = patternImage(4, 4, 1);
const dataUrl = `data:image/png;base64,${png.toString('base64')}`;

describe('provider request mapping', () => {
  it('Veo: instances[0] with inline images by role, parameters from params over metadata', async () => {
    const body = await veoCreateBody(target, req({
      mode: 'first_last_frame',
      images: [{ url: dataUrl, role: 'last_frame' }, { url: dataUrl, role: 'first_frame' }],
      params: { duration: 6, ratio: '9:16', resolution: '720p' },
      metadata: { negativePrompt: 'rain', durationSeconds: 4 },
    }));
    const inline = { bytesBase64Encoded: png.toString('base64'), mimeType: 'image/png' };
    expect(body).toEqual({
      instances: [{ prompt: 'a corgi', image: inline, lastFrame: inline }],
      parameters: { negativePrompt: 'rain', durationSeconds: 6, aspectRatio: '9:16', resolution: '720p' },
    });
    const refs = await veoCreateBody(target, req({ mode: 'reference_image', images: [{ url: dataUrl, role: 'reference_image' }, { url: dataUrl, role: 'reference_image' }] }));
    expect((refs.instances as any)[0].referenceImages).toEqual([{ image: inline, referenceType: 'asset' }, { image: inline, referenceType: 'asset' }]);
  });

  it('Kling: text2video with aspect_ratio and string duration; image2video with raw base64 and image_tail; mode from resolution', () => {
    const text = klingCreate('kling-v2-6', req({ params: { duration: 10, ratio: '1:1', resolution: '1080p' }, metadata: { negative_prompt: 'rain', model_name: 'other' } }), 'https://gw/cb');
    expect(text).toEqual({ kind: 'text2video', body: { negative_prompt: 'rain', model_name: 'kling-v2-6', prompt: 'a corgi', mode: 'pro', duration: '10', aspect_ratio: '1:1', callback_url: 'https://gw/cb' } });
    const image = klingCreate('kling-v1-6', req({ prompt: '', mode: 'first_last_frame', images: [{ url: dataUrl, role: 'first_frame' }, { url: 'https://e/b.png', role: 'last_frame' }], params: { resolution: '720p' } }));
    expect(image).toEqual({ kind: 'image2video', body: { model_name: 'kling-v1-6', mode: 'std', image: png.toString('base64'), image_tail: 'https://e/b.png' } });
  });

  it('Wan: size from resolution + ratio for text, resolution and image fields for image modes, metadata split into input and parameters', () => {
    expect(wanCreate('wan2.5-t2v-preview', req({ params: { resolution: '720p', ratio: '9:16', duration: 10, seed: 7, watermark: true }, metadata: { negative_prompt: 'rain', prompt_extend: false } }))).toEqual({
      path: '/services/aigc/video-generation/video-synthesis',
      body: { model: 'wan2.5-t2v-preview', input: { negative_prompt: 'rain', prompt: 'a corgi' }, parameters: { prompt_extend: false, size: '720*1280', duration: 10, seed: 7, watermark: true } },
    });
    expect(wanCreate('wan2.5-i2v-preview', req({ mode: 'first_frame', images: [{ url: 'https://e/a.png', role: 'first_frame' }], params: { resolution: '480p' } })).body).toEqual({
      model: 'wan2.5-i2v-preview',
      input: { prompt: 'a corgi', img_url: 'https://e/a.png' },
      parameters: { resolution: '480P' },
    });
    const kf = wanCreate('wan2.2-kf2v-flash', req({ mode: 'first_last_frame', images: [{ url: 'https://e/a.png', role: 'first_frame' }, { url: 'https://e/b.png', role: 'last_frame' }] }));
    expect(kf.path).toBe('/services/aigc/image2video/video-synthesis');
    expect(kf.body.input).toEqual({ prompt: 'a corgi', first_frame_url: 'https://e/a.png', last_frame_url: 'https://e/b.png' });
  });

  it('Hailuo: upper-case resolution, frames and a subject reference, metadata beside', () => {
    expect(hailuoCreateBody('MiniMax-Hailuo-02', req({ mode: 'first_last_frame', images: [{ url: 'https://e/a.png', role: 'first_frame' }, { url: dataUrl, role: 'last_frame' }], params: { duration: 6, resolution: '1080p' }, metadata: { prompt_optimizer: false, model: 'x' } }))).toEqual({
      prompt_optimizer: false,
      model: 'MiniMax-Hailuo-02',
      prompt: 'a corgi',
      duration: 6,
      resolution: '1080P',
      first_frame_image: 'https://e/a.png',
      last_frame_image: dataUrl,
    });
    expect(hailuoCreateBody('S2V-01', req({ mode: 'reference_image', images: [{ url: 'https://e/s.png', role: 'reference_image' }] })).subject_reference).toEqual([{ type: 'character', image: ['https://e/s.png'] }]);
  });
});

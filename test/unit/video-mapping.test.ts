import { describe, expect, it } from 'vitest';
import { mapProviderTask, progressOf, runningProgress } from '../../src/tasks/status.js';
import { signedUrlExpiry, urlNeedsRefresh } from '../../src/providers/signed-url.js';
import { deriveMode, parseCreateBody } from '../../src/tasks/request.js';
import { arkCreateBody, arkVideos } from '../../src/providers/ark/videos.js';
import { GatewayError } from '../../src/http/errors.js';
import { videoTokens } from '../../src/providers/ark/wire.js';

// The pure parts of video tasks: status mapping, progress, URL expiry, request parsing, Ark body.

describe('provider status → gateway status', () => {
  const view = (task: Record<string, unknown>) => arkVideos.view(task);

  it('maps every Ark status per the table in docs/video.md', () => {
    expect(mapProviderTask(view({ status: 'queued' }))).toEqual({ status: 'QUEUED', failReason: '' });
    expect(mapProviderTask(view({ status: 'running' }))).toEqual({ status: 'IN_PROGRESS', failReason: '' });
    expect(mapProviderTask(view({ status: 'succeeded', content: { video_url: 'https://v/x.mp4' } }))).toEqual({ status: 'SUCCESS', failReason: 'https://v/x.mp4' });
    expect(mapProviderTask(view({ status: 'failed', error: { code: 'OutputVideoSensitiveContentDetected', message: 'bad' } }))).toEqual({
      status: 'FAILURE',
      failReason: 'OutputVideoSensitiveContentDetected: bad',
    });
    expect(mapProviderTask(view({ status: 'failed', error: null }))!.failReason).toMatch(/^failed: /);
    expect(mapProviderTask(view({ status: 'cancelled' }))!.failReason).toMatch(/^cancelled: /);
    expect(mapProviderTask(view({ status: 'expired' }))!.failReason).toMatch(/^expired: /);
    expect(mapProviderTask(view({ status: 'succeeded', content: {} }))!.status).toBe('FAILURE');
    expect(mapProviderTask(view({ status: 'paused' }))).toBeNull();
  });

  it('reads tokens from usage.total_tokens, else completion_tokens', () => {
    expect(view({ usage: { total_tokens: 10, completion_tokens: 9 } }).usage).toEqual({ unit: 'tokens', units: 10 });
    expect(view({ usage: { completion_tokens: 9 } }).usage).toEqual({ unit: 'tokens', units: 9 });
    expect(view({}).usage).toBeNull();
    expect(view({ usage: { total_tokens: -1 } }).usage).toBeNull();
  });

  it('shows progress 0 / 5 / 10–95 growing / 100', () => {
    expect(progressOf('SUBMITTED', 0, 100)).toBe('0%');
    expect(progressOf('QUEUED', 0, 100)).toBe('5%');
    expect(runningProgress(1000, 1000)).toBe('10%');
    const seen = [0, 10, 30, 60, 120, 600, 100_000].map((t) => Number.parseInt(runningProgress(1000, 1000 + t), 10));
    for (let i = 1; i < seen.length; i++) expect(seen[i]).toBeGreaterThanOrEqual(seen[i - 1]);
    expect(seen[0]).toBe(10);
    expect(seen[seen.length - 1]).toBe(95);
    expect(progressOf('SUCCESS', 0, 100)).toBe('100%');
    expect(progressOf('FAILURE', 0, 100)).toBe('100%');
  });
});

describe('signed URL expiry', () => {
  it('reads TOS and S3 signing time and lifetime, and OSS-style Expires', () => {
    const tos = 'https://b.tos-cn-beijing.volces.com/v.mp4?X-Tos-Algorithm=TOS4-HMAC-SHA256&X-Tos-Date=20250331T095412Z&X-Tos-Expires=86400&X-Tos-Signature=ab';
    expect(signedUrlExpiry(tos, 0)).toEqual({ expiresAt: Date.UTC(2025, 2, 31, 9, 54, 12) + 86_400_000, lifetimeMs: 86_400_000 });
    const s3 = 'https://s3/x.mp4?x-amz-date=20250101T000000Z&x-amz-expires=3600&x-amz-signature=1';
    expect(signedUrlExpiry(s3, 0).expiresAt).toBe(Date.UTC(2025, 0, 1) + 3_600_000);
    expect(signedUrlExpiry('https://oss/x.mp4?Expires=1800000000&Signature=x', 1_799_996_400).expiresAt).toBe(1_800_000_000_000);
  });

  it('assumes 24 h from updated_at when the URL says nothing', () => {
    expect(signedUrlExpiry('https://cdn/x.mp4', 1_700_000_000).expiresAt).toBe(1_700_000_000_000 + 86_400_000);
  });

  it('refreshes an expired URL and one in the last tenth of its life', () => {
    const url = 'https://v/x?X-Tos-Date=20250101T000000Z&X-Tos-Expires=100';
    const expiresAt = Date.UTC(2025, 0, 1) + 100_000;
    expect(urlNeedsRefresh(url, expiresAt, expiresAt - 50_000)).toBe(false);
    expect(urlNeedsRefresh(url, expiresAt, expiresAt - 5_000)).toBe(true);
    expect(urlNeedsRefresh(url, expiresAt, expiresAt + 1)).toBe(true);
    expect(urlNeedsRefresh('', expiresAt, expiresAt + 1)).toBe(false);
  });
});

describe('create request', () => {
  const img = 'https://e/a.png';

  it('derives the mode and action from the images', () => {
    expect(parseCreateBody({ model: 'm', prompt: 'p' }).action).toBe('textGenerate');
    expect(parseCreateBody({ model: 'm', image: img }).action).toBe('generate');
    expect(parseCreateBody({ model: 'm', images: [{ url: img, role: 'first_frame' }] }).action).toBe('generate');
    expect(parseCreateBody({ model: 'm', images: [{ url: img, role: 'last_frame' }, { url: img, role: 'first_frame' }] }).action).toBe('firstTailGenerate');
    expect(parseCreateBody({ model: 'm', images: [{ url: img, role: 'reference_image' }] }).action).toBe('referenceGenerate');
    expect(() => deriveMode([{ url: img }, { url: img, role: 'last_frame' }])).toThrow(GatewayError);
  });

  it('accepts seconds as a string and passes metadata through under explicit fields', () => {
    const p = parseCreateBody({ model: 'm', prompt: 'p', seconds: '7', resolution: '480p', metadata: { frames: 57, resolution: '1080p', camera_fixed: true } });
    expect(p.request.params).toEqual({ duration: 7, resolution: '480p' });
    const body = arkCreateBody('up-model', p.request);
    expect(body).toEqual({ model: 'up-model', content: [{ type: 'text', text: 'p' }], frames: 57, resolution: '480p', camera_fixed: true, duration: 7 });
    expect(arkVideos.estimate('up-model', p.request)).toEqual({ unit: 'tokens', units: videoTokens('480p', '16:9', 7), resolution: '480p' });
  });

  it('estimates absent sizes at 1080p, 16:9, 5 s (or the metadata frame count)', () => {
    expect(arkVideos.estimate('m', parseCreateBody({ model: 'm', prompt: 'p' }).request)).toEqual({ unit: 'tokens', units: videoTokens('1080p', '16:9', 5), resolution: '1080p' });
    expect(arkVideos.estimate('m', parseCreateBody({ model: 'm', prompt: 'p', metadata: { frames: 121 } }).request).units).toBe(videoTokens('1080p', '16:9', 6));
  });

  it('puts first frame before last frame in the Ark content, with roles', () => {
    const p = parseCreateBody({ model: 'm', images: [{ url: 'https://e/last.png', role: 'last_frame' }, { url: 'https://e/first.png', role: 'first_frame' }] });
    expect(arkCreateBody('x', p.request).content).toEqual([
      { type: 'image_url', image_url: { url: 'https://e/first.png' }, role: 'first_frame' },
      { type: 'image_url', image_url: { url: 'https://e/last.png' }, role: 'last_frame' },
    ]);
  });
});

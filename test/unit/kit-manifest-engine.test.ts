import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { GatewayError } from '../../src/http/errors.js';
import { parseManifest } from '../../src/providers/kit/load.js';
import { videoAdapter } from '../../src/providers/kit/video-adapter.js';
import type { VideoGenerationRequest } from '../../src/providers/video-types.js';

// The provider kit's engine on a manifest of its own (no built-in provider): how templates fill
// a create body, where metadata goes, which variant a request takes, the checks and estimates a
// manifest declares, and how a task object reads back in neutral terms.

const manifest = parseManifest(
  stringify({
    type: 'acme',
    name: 'Acme Video',
    owned_by: 'acme',
    api: { base_path: '/v2', auth: { scheme: 'bearer' } },
    videos: {
      modes: ['text', 'first_frame', 'first_last_frame', 'reference_image'],
      params: ['resolution', 'ratio', 'duration', 'seed'],
      metadata: { into: 'options', fields: { negative_prompt: 'input' }, reserved: ['input'] },
      shape_from_image: true,
      strict_ratios: true,
      frame_sizes: { '720p': { '16:9': '1280x720', '1:1': '960x960' }, '1080p': { '16:9': '1920x1080' } },
      maps: { tier: { '720p': 'std', '1080p': 'hd' } },
      rules: [{ when: { resolution: { in: ['1080p'] }, duration: { min: 6 } }, param: 'duration', message: 'duration must be at most 5 at 1080p.' }],
      create: [
        {
          name: 'text',
          when: { mode: { in: ['text'] } },
          path: '/models/{model}/text',
          body: { model: '{model}', input: { prompt: '{prompt}' }, options: { size: '{frame_size|replace:x:*}', tier: '{resolution|map:tier}', length: '{duration|string}', seed: '{seed}' }, hook: '{callback_url}' },
        },
        {
          name: 'image',
          path: '/models/{model}/image',
          body: {
            model: '{model}',
            input: { prompt: '{prompt}', frames: ['{image.first_frame}', '{image.last_frame}'], refs: [{ $each: 'images.reference_image', $do: { url: '{item.url}', n: '{item.index}' } }] },
            subject: [{ kind: 'character', image: '{images.reference_image}' }],
          },
        },
      ],
      task_id: { path: 'data.id', pattern: '^[a-z0-9]+$', store: '{variant}/{value}', stored_pattern: '^(text|image)/[a-z0-9]+$' },
      get: { path: '/tasks/{id|segments}' },
      task: {
        status: { path: 'state', map: { waiting: 'queued', working: 'running', ok: 'succeeded', bad: 'failed', gone: { state: 'expired', code: 'forgotten', message: 'Acme forgot the task.' } }, by_code: { path: 'error.code', map: { ABORTED: 'cancelled' } } },
        failure: { code: { path: 'error.code', default: 'failed' }, message: { path: 'error.text', default: 'Acme says it failed.' } },
        moderation: { any: [{ path: 'error.code', in: ['NSFW', 'BLOCKED'] }], code: 'content_filtered_{error.code}' },
        result: { url: 'output.0', expiry: { after_s: 3600 } },
        progress: { path: 'ratio_done', scale: 100 },
        usage: { unit: 'seconds', paths: ['meta.seconds'], round: true, resolution: { path: 'meta.lines', format: '{value}p' } },
        updated_at: { paths: ['finished', 'started'], format: 'datetime', utc_offset_h: 8 },
      },
      estimate: { unit: 'tokens', duration: 5, resolution: '720p', max_duration: 10, metadata: { frames: 'frames' }, tokens: { divisor: 1000, fallback_resolution: '720p', fallback_ratio: '16:9' } },
      lifetime: { seconds: 7200 },
    },
    model_defaults: { modes: ['text', 'first_frame', 'first_last_frame', 'reference_image'], durations: [5, 10], resolutions: ['720p', '1080p'], ratios: ['16:9', '1:1'], fps: [25], default_resolution: '720p' },
    models: [{ id: 'acme-1', offer: { price: { per_second: 0.1 } } }, { match: '^acme-' }],
  }),
  'acme.yaml',
);
const adapter = videoAdapter(manifest);
const req = (over: Partial<VideoGenerationRequest>): VideoGenerationRequest => ({ prompt: 'a corgi', mode: 'text', images: [], params: {}, metadata: {}, ...over });

/** The GatewayError a check throws. */
function refusal(fn: () => void): GatewayError {
  const err = (() => {
    try {
      fn();
    } catch (e) {
      return e;
    }
  })();
  expect(err).toBeInstanceOf(GatewayError);
  return err as GatewayError;
}

describe('kit create body', () => {
  it('fills placeholders with transforms, leaves out what the client did not give, and puts metadata where the manifest says', () => {
    const c = adapter.createCall('acme-1', req({ params: { resolution: '720p', ratio: '1:1', duration: 10, seed: 0 }, metadata: { negative_prompt: 'rain', steps: 30 } }), 'https://gw/cb');
    expect(c).toEqual({
      variant: 'text',
      method: 'POST',
      path: '/models/acme-1/text',
      headers: {},
      body: { model: 'acme-1', input: { negative_prompt: 'rain', prompt: 'a corgi' }, options: { steps: 30, size: '960*960', tier: 'std', length: '10', seed: 0 }, hook: 'https://gw/cb' },
    });
    // Nothing given: no options object, no callback.
    expect(adapter.createCall('acme-1', req({})).body).toEqual({ model: 'acme-1', input: { prompt: 'a corgi' } });
  });

  it('takes the first variant whose condition holds; images by role, $each and lists drop what is absent', () => {
    const one = adapter.createCall('acme-1', req({ mode: 'first_frame', prompt: '', images: [{ url: 'https://e/a.png', role: 'first_frame' }] }));
    expect(one.variant).toBe('image');
    expect(one.body).toEqual({ model: 'acme-1', input: { frames: ['https://e/a.png'] } });
    const refs = adapter.createCall('acme-1', req({ mode: 'reference_image', images: [{ url: 'https://e/r1.png', role: 'reference_image' }, { url: 'https://e/r2.png', role: 'reference_image' }] }));
    expect(refs.body).toEqual({
      model: 'acme-1',
      input: { prompt: 'a corgi', refs: [{ url: 'https://e/r1.png', n: 0 }, { url: 'https://e/r2.png', n: 1 }] },
      subject: [{ kind: 'character', image: ['https://e/r1.png', 'https://e/r2.png'] }],
    });
  });

  it("sends a model's own default where the provider requires a field the client left out (or:, default_duration), and holds credit for it", () => {
    const doc = {
      type: 'req',
      name: 'Req Video',
      owned_by: 'req',
      api: { auth: { scheme: 'bearer' } },
      videos: {
        modes: ['text'],
        frame_sizes: { '720p': { '16:9': '1280x720', '9:16': '720x1280' } },
        create: { path: '/v', body: { ratio: '{frame_size|replace:x:*|or:facts.ratio}', duration: '{duration|or:default_duration}' } },
        task_id: { path: 'id' },
        get: { path: '/v/{id}' },
        task: { status: { path: 's', map: {} }, result: { url: 'u' } },
        estimate: { unit: 'seconds', duration: 5 },
        lifetime: { seconds: 3600 },
      },
      models: [{ id: 'm', default_resolution: '720p', default_duration: 8, facts: { ratio: '1280*720' } }, { match: '' }],
    };
    const a = videoAdapter(parseManifest(stringify(doc), 'req.yaml'));
    expect(a.createCall('m', req({ params: { ratio: '9:16', duration: 4 } })).body).toEqual({ ratio: '720*1280', duration: 4 });
    expect(a.createCall('m', req({})).body).toEqual({ ratio: '1280*720', duration: 8 });
    expect(a.estimate('m', req({}))).toEqual({ unit: 'seconds', units: 8, resolution: '720p' });
    expect(a.estimate('other', req({})).units).toBe(5);
    expect(a.createCall('other', req({})).body).toEqual({});
    const broken = { ...doc, videos: { ...doc.videos, create: { path: '/v', body: { duration: '{duration|or:nope}' } } } };
    expect(() => parseManifest(stringify(broken), 'req.yaml')).toThrow(/unknown placeholder \{nope\} after or:/);
  });

  it('accepts a callback only when a create body has a place for it', () => {
    expect(adapter.acceptsCallback).toBe(true);
  });
});

describe('kit checks and estimate', () => {
  it('refuses parameters the provider does not take, naming those it does', () => {
    const e = refusal(() => adapter.validate!('acme-1', req({ params: { watermark: true } })));
    expect([e.param, e.message]).toEqual(['watermark', 'watermark is not supported by Acme Video; it takes resolution, ratio, duration, seed (others go in metadata).']);
  });

  it('refuses a ratio where the image decides the shape, and one the frame-size table lacks at the resolution', () => {
    expect(refusal(() => adapter.validate!('acme-1', req({ mode: 'first_frame', images: [{ url: 'https://e/a.png', role: 'first_frame' }], params: { ratio: '1:1' } }))).message).toBe(
      'ratio applies to text-to-video only on Acme Video: the image decides the shape.',
    );
    expect(refusal(() => adapter.validate!('acme-1', req({ params: { resolution: '1080p', ratio: '1:1' } }))).message).toBe('ratio must be one of 16:9 at 1080p.');
  });

  it('applies the manifest rules and refuses reserved metadata', () => {
    expect(refusal(() => adapter.validate!('acme-1', req({ params: { resolution: '1080p', duration: 10 } }))).message).toBe('duration must be at most 5 at 1080p.');
    expect(() => adapter.validate!('acme-1', req({ params: { resolution: '720p', duration: 10 } }))).not.toThrow();
    expect(refusal(() => adapter.validate!('acme-1', req({ metadata: { input: {} } }))).message).toBe('metadata.input is set by the gateway and cannot be passed through.');
  });

  it('estimates tokens from the frame size, fps and seconds (a metadata frame count counts, capped)', () => {
    expect(adapter.estimate('acme-1', req({ params: { resolution: '1080p' } }))).toEqual({ unit: 'tokens', units: Math.floor((1920 * 1080 * 25 * 5) / 1000), resolution: '1080p' });
    expect(adapter.estimate('acme-1', req({ metadata: { frames: 100 } })).units).toBe(Math.floor((1280 * 720 * 25 * 4) / 1000));
    expect(adapter.estimate('acme-1', req({ metadata: { frames: 10_000 } })).units).toBe(Math.floor((1280 * 720 * 25 * 10) / 1000));
  });

  it('lists the table sizes and, where the image decides the shape, means the resolution only', () => {
    expect(adapter.sizes!('acme-1', 'text').slice(0, 3)).toEqual([
      { size: '1280x720', resolution: '720p', ratio: '16:9' },
      { size: '960x960', resolution: '720p', ratio: '1:1' },
      { size: '1920x1080', resolution: '1080p', ratio: '16:9' },
    ]);
    expect(adapter.sizes!('acme-1', 'first_frame').every((o) => o.ratio === undefined)).toBe(true);
  });

  it('matches models by id, then pattern, and offers only entries with a price', () => {
    expect(adapter.caps('acme-9')).toEqual({ modes: ['text', 'first_frame', 'first_last_frame', 'reference_image'], durations: [5, 10], resolutions: ['720p', '1080p'], ratios: ['16:9', '1:1'], fps: [25] });
    expect(adapter.expiresAfterS(req({}))).toBe(7200);
  });
});

describe('kit task view', () => {
  const now = Date.UTC(2025, 0, 1);

  it('maps status words, with a fixed reason where the map gives one', () => {
    expect(adapter.view({ state: 'waiting' }).state).toBe('queued');
    expect(adapter.view({ state: 'gone' })).toMatchObject({ state: 'expired', errorCode: 'forgotten', errorMessage: 'Acme forgot the task.' });
    expect(adapter.view({ state: 'weird' })).toMatchObject({ state: 'unknown', rawStatus: 'weird' });
  });

  it('ends a failed task whose code the status names elsewhere (by_code) in that state, with the code as its reason', () => {
    expect(adapter.view({ state: 'bad', error: { code: 'ABORTED', text: 'stopped by the account' } })).toMatchObject({ state: 'cancelled', errorCode: 'ABORTED', errorMessage: 'stopped by the account' });
    expect(adapter.view({ state: 'working', error: { code: 'ABORTED' } }).state).toBe('running');
    expect(adapter.view({ state: 'bad', error: { code: 'OTHER' } }).state).toBe('failed');
  });

  it('reads the failure reason with defaults, and a moderation marker as content_filtered', () => {
    expect(adapter.view({ state: 'bad' })).toMatchObject({ state: 'failed', errorCode: 'failed', errorMessage: 'Acme says it failed.' });
    expect(adapter.view({ state: 'bad', error: { code: 'NSFW', text: 'no' } })).toMatchObject({ state: 'failed', errorCode: 'content_filtered_NSFW', errorMessage: 'no' });
  });

  it('reads the result URL with its expiry, progress, usage and the wall-clock update time in the provider zone', () => {
    const v = adapter.view({ state: 'ok', output: ['https://cdn/v.mp4'], ratio_done: 0.42, meta: { seconds: '5.04', lines: 720 }, finished: '2025-01-01 08:00:10' }, now);
    expect(v.updatedAtS).toBe(Date.UTC(2025, 0, 1, 0, 0, 10) / 1000);
    expect(v.result).toEqual({ kind: 'url', url: 'https://cdn/v.mp4', expiresAtS: v.updatedAtS + 3600 });
    expect(v.progress).toBeCloseTo(42);
    expect(v.usage).toEqual({ unit: 'seconds', units: 5, resolution: '720p' });
    expect(adapter.view({ state: 'working' }).progress).toBeNull();
  });

  it('refuses to read a kept id that does not have the form the read path needs', async () => {
    const err = await adapter.get({ upstream: {} as never }, { baseUrl: 'http://x' } as never, '../admin').catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/stored Acme Video task id/);
  });
});

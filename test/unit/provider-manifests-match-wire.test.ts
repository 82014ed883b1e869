import { describe, expect, it } from 'vitest';
import { SEEDANCE_FPS, SEEDANCE_RATIOS, SEEDANCE_RESOLUTIONS, SEEDANCE_SIZES } from '../../src/providers/ark/wire.js';
import { QWEN_IMAGE_SIZES, WAN_IMAGE_MODELS, WAN_MODELS, WAN_SIZES } from '../../src/providers/dashscope/wire.js';
import { imageFacts } from '../../src/providers/kit/image-request.js';
import { VEO_DURATIONS, VEO_IMAGE_TYPES, VEO_MODELS, VEO_RATIOS } from '../../src/providers/gemini/wire.js';
import { KLING_MODELS, KLING_RATIOS } from '../../src/providers/kling/wire.js';
import { HAILUO_1080P_DURATION, HAILUO_FRAME, HAILUO_MODELS } from '../../src/providers/minimax/wire.js';
import { providerFor } from '../../src/providers/index.js';
import { modelFacts } from '../../src/providers/kit/models.js';
import { ARK } from '../../src/providers/ark/videos.js';
import { DASHSCOPE } from '../../src/providers/dashscope/videos.js';
import { GEMINI } from '../../src/providers/gemini/videos.js';
import { MINIMAX } from '../../src/providers/minimax/videos.js';
import { VIDU2_8S_RESOLUTION, VIDU_MAX_REFERENCES, VIDU_MODELS } from '../../src/providers/vidu/wire.js';
import { VIDU } from '../../src/providers/vidu/videos.js';
import { RUNWAY_MODELS, RUNWAY_VERSION } from '../../src/providers/runway/wire.js';
import { RUNWAY } from '../../src/providers/runway/videos.js';
import { videoAdapter } from '../../src/providers/kit/video-adapter.js';
import { LUMA_MODELS, LUMA_RATIOS } from '../../src/providers/luma/wire.js';
import { LUMA } from '../../src/providers/luma/videos.js';
import { PIXVERSE_1080P_DURATION, PIXVERSE_IMAGE_TYPES, PIXVERSE_MODELS, PIXVERSE_RATIOS } from '../../src/providers/pixverse/wire.js';
import { PIXVERSE } from '../../src/providers/pixverse/videos.js';

const runwayAdapter = videoAdapter(RUNWAY);

// The simulator plays each provider from its own wire tables (src/providers/<type>/wire.ts,
// written from the provider's docs); the gateway reads the same facts from the provider's
// manifest. The two must not drift apart: a model the simulator serves is one the manifest knows,
// with the same modes, lengths, resolutions, ratios and frame sizes.

const caps = (type: string, model: string) => providerFor(type)!.videos!.caps(model);
const lower = (r: string) => r.toLowerCase();

describe('manifests agree with the simulator wire tables', () => {
  it('Hailuo: modes, durations, resolutions, default resolution, frame sizes, the 1080p length rule', () => {
    const mode = { text: 'text', first_frame: 'first_frame', first_last_frame: 'first_last_frame', subject: 'reference_image' } as const;
    for (const [model, f] of Object.entries(HAILUO_MODELS)) {
      expect(caps('minimax', model), model).toEqual({ modes: f.modes.map((m) => mode[m]), durations: f.durations, resolutions: f.resolutions.map(lower) });
      expect(modelFacts(MINIMAX, model).default_resolution).toBe(lower(f.defaultResolution));
    }
    for (const [r, [w, h]] of Object.entries(HAILUO_FRAME)) expect(MINIMAX.videos.frame_sizes?.[lower(r)]).toBe(`${w}x${h}`);
    expect(JSON.stringify(MINIMAX.videos.rules)).toContain(`"not_in":[${HAILUO_1080P_DURATION}]`);
  });

  it('Wan: kind (by endpoint and mode), resolutions, default resolution, durations, text-to-video sizes', () => {
    const modes = { t2v: ['text'], i2v: ['first_frame'], kf2v: ['first_last_frame'] };
    for (const [model, f] of Object.entries(WAN_MODELS)) {
      expect(modelFacts(DASHSCOPE, model).facts.kind, model).toBe(f.kind);
      expect(caps('dashscope', model), model).toMatchObject({ modes: modes[f.kind], durations: f.durations, resolutions: f.resolutions.map(lower) });
      expect(modelFacts(DASHSCOPE, model).default_resolution).toBe(lower(f.defaultResolution));
    }
    for (const [r, byRatio] of Object.entries(WAN_SIZES)) {
      for (const [ratio, size] of Object.entries(byRatio)) expect((DASHSCOPE.videos.frame_sizes?.[lower(r)] as Record<string, string>)[ratio]).toBe(size.replace('*', 'x'));
    }
  });

  it('Wan and Qwen-Image images: sizes (as W*H by ratio), images per task', () => {
    const sized = (table: unknown) => Object.entries(table as Record<string, string>).map(([size, ratio]) => [ratio, size.replace('x', '*')]);
    for (const [model, f] of Object.entries(WAN_IMAGE_MODELS)) {
      const img = imageFacts(DASHSCOPE, model);
      expect((img.per_call ?? img.max_n ?? 1) <= f.maxN, model).toBe(true);
      if (f.sizing === 'sides') expect(img.dimensions, model).toEqual({ min: 512, max: 1440 });
      if (f.sizing === 'table') expect(Object.fromEntries(sized(img.sizes)), model).toEqual(QWEN_IMAGE_SIZES);
      if (f.sizing === 'table') expect(DASHSCOPE.images?.maps?.qwen_size).toEqual(QWEN_IMAGE_SIZES);
      if (f.sizing === 'area') expect(Object.fromEntries(sized(img.sizes)), model).toEqual(DASHSCOPE.images?.maps?.wan25_size);
    }
  });

  it('Kling: a last frame where the model takes image_tail, and the ratios', () => {
    for (const [model, f] of Object.entries(KLING_MODELS)) {
      expect(caps('kling', model).modes?.includes('first_last_frame'), model).toBe(f.tail);
      expect(caps('kling', model).ratios).toEqual(KLING_RATIOS);
    }
  });

  it('Veo: resolutions per model, durations, ratios, image types', () => {
    for (const [model, f] of Object.entries(VEO_MODELS)) expect(caps('gemini', model), model).toMatchObject({ durations: VEO_DURATIONS, resolutions: f.resolutions, ratios: VEO_RATIOS });
    expect(GEMINI.videos.inline_images?.types).toEqual(VEO_IMAGE_TYPES);
  });

  it('Vidu: modes (by endpoint), durations, resolutions, default resolution, ratios, the length and reference rules', () => {
    const mode = { text2video: 'text', img2video: 'first_frame', 'start-end2video': 'first_last_frame', reference2video: 'reference_image' } as const;
    for (const [model, f] of Object.entries(VIDU_MODELS)) {
      const c = caps('vidu', model);
      expect(c.modes?.slice().sort(), model).toEqual(f.endpoints.map((e) => mode[e]).sort());
      expect(c.durations, model).toEqual(f.durations);
      expect(c.resolutions, model).toEqual(f.resolutions);
      if (f.ratios.length) expect(c.ratios, model).toEqual(f.ratios);
      expect(modelFacts(VIDU, model).default_resolution, model).toBe(f.defaultResolution);
      if (f.startEndDurations.length && f.startEndDurations.length < f.durations.length) expect(Math.max(...f.startEndDurations)).toBe(8);
    }
    const rules = JSON.stringify(VIDU.videos?.rules);
    expect(rules).toContain('"min":9');
    expect(rules).toContain(`"not_in":["${VIDU2_8S_RESOLUTION}"]`);
    expect(rules).toContain(`"min":${VIDU_MAX_REFERENCES.viduq2 + 1}`);
    expect(rules).toContain(`"min":${VIDU_MAX_REFERENCES['vidu2.0'] + 1}`);
  });

  it('Runway: modes, durations, the ratios each endpoint takes as pixel sizes, the version header', () => {
    for (const [model, f] of Object.entries(RUNWAY_MODELS)) {
      const c = caps('runway', model);
      expect(c.modes, model).toEqual([...(f.text ? ['text'] : []), 'first_frame', ...(f.lastFrame ? ['first_last_frame'] : [])]);
      expect(c.durations, model).toEqual(f.durations);
      const sent = (mode: 'text' | 'first_frame', ratio: string, resolution: string) =>
        runwayAdapter.createCall(model, { prompt: 'x', mode, images: mode === 'text' ? [] : [{ url: 'https://e/a.png', role: 'first_frame' }], params: { ratio, resolution }, metadata: {} }).body.ratio;
      const offered = (mode: 'text' | 'first_frame') =>
        (c.resolutions ?? []).flatMap((r) => (c.ratios ?? []).filter((q) => !(mode === 'text' && model === 'gen4.5' && !['16:9', '9:16'].includes(q))).map((q) => [r, q])).filter(([r, q]) => (RUNWAY.videos!.frame_sizes?.[r] as Record<string, string>)[q]);
      expect(offered('first_frame').map(([r, q]) => sent('first_frame', q, r)).sort(), model).toEqual([...f.imageRatios].sort());
      if (f.text) expect(offered('text').map(([r, q]) => sent('text', q, r)).sort(), model).toEqual([...f.textRatios].sort());
      expect(f.imageRatios).toContain(modelFacts(RUNWAY, model).facts.ratio);
      expect(f.durationOptional || modelFacts(RUNWAY, model).default_duration !== undefined).toBe(true);
    }
    expect(RUNWAY.api.headers).toEqual({ 'X-Runway-Version': RUNWAY_VERSION });
  });

  it('Luma: durations (as Luma words them), resolutions, default resolution, ratios, keyframes', () => {
    const adapter = videoAdapter(LUMA);
    for (const [model, f] of Object.entries(LUMA_MODELS)) {
      const c = caps('luma', model);
      expect(c, model).toEqual({ modes: ['text', 'first_frame', 'first_last_frame'], durations: f.durations.map((d) => Number(d.replace('s', ''))), resolutions: f.resolutions, ratios: LUMA_RATIOS });
      expect(modelFacts(LUMA, model).default_resolution).toBe(f.defaultResolution);
      for (const d of c.durations!) expect(f.durations).toContain(adapter.createCall(model, { prompt: 'x', mode: 'text', images: [], params: { duration: d }, metadata: {} }).body.duration);
    }
    const body = adapter.createCall('ray-2', { prompt: 'x', mode: 'first_last_frame', images: [{ url: 'https://e/a.png', role: 'first_frame' }, { url: 'https://e/b.png', role: 'last_frame' }], params: {}, metadata: {} }).body;
    expect(body.keyframes).toEqual({ frame0: { type: 'image', url: 'https://e/a.png' }, frame1: { type: 'image', url: 'https://e/b.png' } });
  });

  it('Pixverse: qualities, durations, ratios, the 1080p length rule, the image types its upload takes', () => {
    for (const [model, f] of Object.entries(PIXVERSE_MODELS)) expect(caps('pixverse', model), model).toEqual({ modes: ['text', 'first_frame', 'first_last_frame'], durations: f.durations, resolutions: f.qualities, ratios: PIXVERSE_RATIOS });
    expect(JSON.stringify(PIXVERSE.videos!.rules)).toContain(`"not_in":[${PIXVERSE_1080P_DURATION}]`);
    expect(PIXVERSE.videos!.inline_images?.types).toEqual(PIXVERSE_IMAGE_TYPES);
  });

  it('Seedance: resolutions, ratios, frame rate and the frame sizes the tokens are counted from', () => {
    const c = caps('ark', 'doubao-seedance-1-0-pro-250528');
    expect(c.resolutions).toEqual(SEEDANCE_RESOLUTIONS);
    expect(c.fps).toEqual([SEEDANCE_FPS]);
    for (const r of SEEDANCE_RATIOS) expect(c.ratios).toContain(r);
    for (const [r, byRatio] of Object.entries(SEEDANCE_SIZES)) {
      for (const [ratio, [w, h]] of Object.entries(byRatio)) expect((ARK.videos.frame_sizes?.[r] as Record<string, string>)[ratio]).toBe(`${w}x${h}`);
    }
  });
});

// MiniMax Hailuo video generation as the simulator's Hailuo part plays it: what each model
// accepts. Plain data, no imports. The gateway's own view of the same facts is manifest.yaml;
// test/provider-manifests-match-wire.test.ts keeps the two in step.

/** A request's input shape: text, first frame, first + last frame, or a subject reference (S2V-01). */
export type HailuoMode = 'text' | 'first_frame' | 'first_last_frame' | 'subject';

export interface HailuoModelFacts {
  modes: HailuoMode[];
  durations: number[];
  /** MiniMax's spelling: 512P, 720P, 768P, 1080P. */
  resolutions: string[];
  defaultResolution: string;
}

export const HAILUO_MODELS: Record<string, HailuoModelFacts> = {
  'MiniMax-Hailuo-2.3': { modes: ['text', 'first_frame'], durations: [6, 10], resolutions: ['768P', '1080P'], defaultResolution: '768P' },
  'MiniMax-Hailuo-2.3-Fast': { modes: ['first_frame'], durations: [6, 10], resolutions: ['768P', '1080P'], defaultResolution: '768P' },
  'MiniMax-Hailuo-02': { modes: ['text', 'first_frame', 'first_last_frame'], durations: [6, 10], resolutions: ['512P', '768P', '1080P'], defaultResolution: '768P' },
  'T2V-01-Director': { modes: ['text'], durations: [6], resolutions: ['720P'], defaultResolution: '720P' },
  'T2V-01': { modes: ['text'], durations: [6], resolutions: ['720P'], defaultResolution: '720P' },
  'I2V-01-Director': { modes: ['first_frame'], durations: [6], resolutions: ['720P'], defaultResolution: '720P' },
  'I2V-01-live': { modes: ['first_frame'], durations: [6], resolutions: ['720P'], defaultResolution: '720P' },
  'I2V-01': { modes: ['first_frame'], durations: [6], resolutions: ['720P'], defaultResolution: '720P' },
  'S2V-01': { modes: ['subject'], durations: [6], resolutions: ['720P'], defaultResolution: '720P' },
};
/** 1080P renders 6 s only; 512P only from an image. */
export const HAILUO_1080P_DURATION = 6;
/** Frame size of a finished video by resolution (16:9). */
export const HAILUO_FRAME: Record<string, [number, number]> = { '512P': [912, 512], '720P': [1280, 720], '768P': [1366, 768], '1080P': [1920, 1080] };

/** MiniMax image generation (POST /v1/image_generation) as the simulator's MiniMax part plays it. */
export interface MinimaxImageModelFacts {
  /** Takes width and height (512–2048, multiples of 8) instead of an aspect ratio. */
  pixels: boolean;
  ratios: string[];
}
const MINIMAX_RATIOS = ['1:1', '16:9', '4:3', '3:2', '2:3', '3:4', '9:16'];
export const MINIMAX_IMAGE_MODELS: Record<string, MinimaxImageModelFacts> = {
  'image-01': { pixels: true, ratios: [...MINIMAX_RATIOS, '21:9'] },
  'image-01-live': { pixels: false, ratios: MINIMAX_RATIOS },
};
/** The picture each aspect ratio draws. */
export const MINIMAX_IMAGE_SIZES: Record<string, [number, number]> = {
  '1:1': [1024, 1024],
  '16:9': [1280, 720],
  '4:3': [1152, 864],
  '3:2': [1248, 832],
  '2:3': [832, 1248],
  '3:4': [864, 1152],
  '9:16': [720, 1280],
  '21:9': [1344, 576],
};
export const MINIMAX_IMAGE_MAX_N = 9;

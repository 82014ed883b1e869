// Alibaba Wan through DashScope as the simulator's Wan part plays it: what each model accepts.
// Plain data, no imports. The gateway's own view of the same facts is manifest.yaml;
// test/provider-manifests-match-wire.test.ts keeps the two in step.

/** t2v: text-to-video (sized by `size`); i2v: first frame; kf2v: first + last frame (own endpoint). */
export type WanKind = 't2v' | 'i2v' | 'kf2v';

export interface WanModelFacts {
  kind: WanKind;
  /** DashScope's spelling: 480P, 720P, 1080P. */
  resolutions: string[];
  /** What the model renders when no resolution (or size) is given. */
  defaultResolution: string;
  /** Seconds; every model defaults to 5. */
  durations: number[];
}

const range = (a: number, b: number) => Array.from({ length: b - a + 1 }, (_, i) => a + i);

export const WAN_MODELS: Record<string, WanModelFacts> = {
  'wan2.2-t2v-plus': { kind: 't2v', resolutions: ['480P', '1080P'], defaultResolution: '1080P', durations: [5] },
  'wan2.5-t2v-preview': { kind: 't2v', resolutions: ['480P', '720P', '1080P'], defaultResolution: '1080P', durations: [5, 10] },
  'wan2.6-t2v': { kind: 't2v', resolutions: ['720P', '1080P'], defaultResolution: '1080P', durations: range(2, 15) },
  'wan2.2-i2v-plus': { kind: 'i2v', resolutions: ['480P', '1080P'], defaultResolution: '1080P', durations: [5] },
  'wan2.2-i2v-flash': { kind: 'i2v', resolutions: ['480P', '720P', '1080P'], defaultResolution: '720P', durations: [5] },
  'wan2.5-i2v-preview': { kind: 'i2v', resolutions: ['480P', '720P', '1080P'], defaultResolution: '1080P', durations: [5, 10] },
  'wan2.6-i2v': { kind: 'i2v', resolutions: ['720P', '1080P'], defaultResolution: '1080P', durations: range(2, 15) },
  'wan2.2-kf2v-flash': { kind: 'kf2v', resolutions: ['480P', '720P', '1080P'], defaultResolution: '720P', durations: [5] },
  'wanx2.1-kf2v-plus': { kind: 'kf2v', resolutions: ['720P'], defaultResolution: '720P', durations: [5] },
};

/** Text-to-video `size` (width*height) by resolution and ratio. */
export const WAN_SIZES: Record<string, Record<string, string>> = {
  '480P': { '16:9': '832*480', '9:16': '480*832', '1:1': '624*624' },
  '720P': { '16:9': '1280*720', '9:16': '720*1280', '1:1': '960*960', '4:3': '1088*832', '3:4': '832*1088' },
  '1080P': { '16:9': '1920*1080', '9:16': '1080*1920', '1:1': '1440*1440', '4:3': '1632*1248', '3:4': '1248*1632' },
};

/**
 * Text-to-image on POST /services/aigc/text2image/image-synthesis, by how `size` ("W*H") is judged:
 * `sides` each side from 512 to 1440 (Wan 2.2 / 2.1); `area` total pixels from 768*768 to
 * 1440*1440 with a ratio from 1:4 to 4:1 (Wan 2.5; its recommended sizes, such as 1104*1472, lie
 * below the 1280*1280 floor older pages give, so the current reference's 768*768 is taken); `table` one of a fixed list (Qwen-Image).
 */
export interface WanImageModelFacts {
  sizing: 'sides' | 'area' | 'table';
  defaultSize: string;
  /** Images per task (DashScope's `n`, which defaults to 4 where more than one is allowed). */
  maxN: number;
  /** Characters of `input.prompt`. */
  maxPrompt: number;
}

/** Qwen-Image's sizes by aspect ratio. */
export const QWEN_IMAGE_SIZES: Record<string, string> = { '16:9': '1664*928', '4:3': '1472*1140', '1:1': '1328*1328', '3:4': '1140*1472', '9:16': '928*1664' };

/** The sizes Wan 2.5 recommends by aspect ratio (any size within its area and ratio bounds is taken). */
export const WAN25_IMAGE_SIZES: Record<string, string> = { '1:1': '1280*1280', '3:4': '1104*1472', '4:3': '1472*1104', '9:16': '960*1696', '16:9': '1696*960' };

const sides = { sizing: 'sides', defaultSize: '1024*1024', maxN: 4, maxPrompt: 800 } as const;

export const WAN_IMAGE_MODELS: Record<string, WanImageModelFacts> = {
  'wan2.5-t2i-preview': { sizing: 'area', defaultSize: '1280*1280', maxN: 4, maxPrompt: 2000 },
  'wan2.2-t2i-flash': sides,
  'wan2.2-t2i-plus': sides,
  'wanx2.1-t2i-turbo': sides,
  'wanx2.1-t2i-plus': sides,
  'qwen-image-plus': { sizing: 'table', defaultSize: '1328*1328', maxN: 1, maxPrompt: 800 },
  'qwen-image': { sizing: 'table', defaultSize: '1328*1328', maxN: 1, maxPrompt: 800 },
};

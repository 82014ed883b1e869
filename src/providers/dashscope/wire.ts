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

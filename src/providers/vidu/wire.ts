// Vidu (Shengshu) video generation as the simulator's Vidu part plays it: what each model accepts
// on each endpoint. Plain data, no imports. The gateway's own view of the same facts is
// manifest.yaml; test/unit/provider-manifests-match-wire.test.ts keeps the two in step.

/** Vidu's four create endpoints (POST /ent/v2/{endpoint}). */
export type ViduEndpoint = 'text2video' | 'img2video' | 'start-end2video' | 'reference2video';

export interface ViduModelFacts {
  endpoints: ViduEndpoint[];
  /** Lengths on img2video and reference2video / text2video. */
  durations: number[];
  /** Lengths on start-end2video (shorter on the q2 models). */
  startEndDurations: number[];
  resolutions: string[];
  defaultResolution: string;
  /** aspect_ratio on text2video and reference2video. */
  ratios: string[];
  defaultDuration: number;
}

const Q2_RATIOS = ['16:9', '9:16', '4:3', '3:4', '1:1'];
const RATIOS = ['16:9', '9:16', '1:1'];
const range = (a: number, b: number) => Array.from({ length: b - a + 1 }, (_, i) => a + i);

export const VIDU_MODELS: Record<string, ViduModelFacts> = {
  viduq2: { endpoints: ['text2video', 'reference2video'], durations: range(1, 10), startEndDurations: [], resolutions: ['540p', '720p', '1080p'], defaultResolution: '720p', ratios: Q2_RATIOS, defaultDuration: 5 },
  'viduq2-pro': { endpoints: ['img2video', 'start-end2video'], durations: range(1, 10), startEndDurations: range(1, 8), resolutions: ['540p', '720p', '1080p'], defaultResolution: '720p', ratios: [], defaultDuration: 5 },
  'viduq2-turbo': { endpoints: ['img2video', 'start-end2video'], durations: range(1, 10), startEndDurations: range(1, 8), resolutions: ['540p', '720p', '1080p'], defaultResolution: '720p', ratios: [], defaultDuration: 5 },
  'viduq2-pro-fast': { endpoints: ['img2video', 'start-end2video'], durations: range(1, 10), startEndDurations: range(1, 8), resolutions: ['720p', '1080p'], defaultResolution: '720p', ratios: [], defaultDuration: 5 },
  viduq1: { endpoints: ['text2video', 'img2video', 'start-end2video', 'reference2video'], durations: [5], startEndDurations: [5], resolutions: ['1080p'], defaultResolution: '1080p', ratios: RATIOS, defaultDuration: 5 },
  'viduq1-classic': { endpoints: ['img2video', 'start-end2video'], durations: [5], startEndDurations: [5], resolutions: ['1080p'], defaultResolution: '1080p', ratios: [], defaultDuration: 5 },
  'vidu2.0': { endpoints: ['img2video', 'start-end2video', 'reference2video'], durations: [4, 8], startEndDurations: [4, 8], resolutions: ['360p', '720p', '1080p'], defaultResolution: '360p', ratios: RATIOS, defaultDuration: 4 },
};
/** vidu2.0 renders 8 s at 720p only. */
export const VIDU2_8S_RESOLUTION = '720p';
/** Reference images per request: 1–7 (vidu2.0: 1–3). */
export const VIDU_MAX_REFERENCES: Record<string, number> = { viduq2: 7, viduq1: 7, 'vidu2.0': 3 };

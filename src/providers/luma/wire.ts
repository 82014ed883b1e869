// Luma Dream Machine video generation as the simulator's Luma part plays it: what each model
// accepts. Plain data, no imports. The gateway's own view of the same facts is manifest.yaml;
// test/unit/provider-manifests-match-wire.test.ts keeps the two in step.

export interface LumaModelFacts {
  /** `duration` values ("5s"). */
  durations: string[];
  resolutions: string[];
  defaultResolution: string;
}

export const LUMA_MODELS: Record<string, LumaModelFacts> = {
  'ray-2': { durations: ['5s', '9s'], resolutions: ['540p', '720p', '1080p', '4k'], defaultResolution: '720p' },
  'ray-flash-2': { durations: ['5s', '9s'], resolutions: ['540p', '720p', '1080p', '4k'], defaultResolution: '720p' },
};
export const LUMA_RATIOS = ['1:1', '16:9', '9:16', '4:3', '3:4', '21:9', '9:21'];

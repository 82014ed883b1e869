// Pixverse video generation as the simulator's Pixverse part plays it: what each model accepts.
// Plain data, no imports. The gateway's own view of the same facts is manifest.yaml;
// test/unit/provider-manifests-match-wire.test.ts keeps the two in step.

export interface PixverseModelFacts {
  /** `quality` values. */
  qualities: string[];
  durations: number[];
}

export const PIXVERSE_MODELS: Record<string, PixverseModelFacts> = {
  v5: { qualities: ['360p', '540p', '720p', '1080p'], durations: [5, 8] },
  'v4.5': { qualities: ['360p', '540p', '720p', '1080p'], durations: [5, 8] },
  v4: { qualities: ['360p', '540p', '720p', '1080p'], durations: [5, 8] },
  'v3.5': { qualities: ['360p', '540p', '720p', '1080p'], durations: [5, 8] },
};
/** 1080p renders 5 s only. */
export const PIXVERSE_1080P_DURATION = 5;
/** `aspect_ratio` of text-to-video (an image decides the shape otherwise). */
export const PIXVERSE_RATIOS = ['16:9', '4:3', '1:1', '3:4', '9:16'];
/** The image types /openapi/v2/image/upload takes. */
export const PIXVERSE_IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/webp'];

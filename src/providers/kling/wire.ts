// Kling video generation as the simulator's Kling part plays it: what each model accepts. Plain
// data, no imports. The gateway's own view of the same facts is manifest.yaml;
// test/provider-manifests-match-wire.test.ts keeps the two in step.

export interface KlingModelFacts {
  /** Takes a last frame (`image_tail`) with the first. */
  tail: boolean;
  /** Takes `sound` (on | off). */
  sound: boolean;
}

export const KLING_MODELS: Record<string, KlingModelFacts> = {
  'kling-v1': { tail: true, sound: false },
  'kling-v1-6': { tail: true, sound: false },
  'kling-v2-master': { tail: false, sound: false },
  'kling-v2-1-master': { tail: false, sound: false },
  'kling-v2-5-turbo': { tail: true, sound: false },
  'kling-v2-6': { tail: true, sound: true },
};
export const KLING_RATIOS = ['16:9', '9:16', '1:1'];

/**
 * The one account the simulator's Kling part knows (access key → secret key). The simulator
 * channel signs with it when it plays Kling, so the demo exercises the real JWT code path.
 */
export const KLING_SIMULATOR_ACCOUNT = { apiKey: 'ak-simulator', apiSecret: 'sk-simulator-kling-secret' };

/** Kling image generation (POST /v1/images/generations) as the simulator's Kling part plays it. */
export interface KlingImageModelFacts {
  /** Draws from text alone. */
  text: boolean;
  /** Takes a reference `image` (image-to-image). */
  image: boolean;
  /** Takes `image_reference` (subject | face) with the image, and needs it. */
  reference: boolean;
  resolutions: string[];
}

export const KLING_IMAGE_MODELS: Record<string, KlingImageModelFacts> = {
  'kling-v1': { text: true, image: true, reference: false, resolutions: ['1k'] },
  'kling-v1-5': { text: true, image: true, reference: true, resolutions: ['1k'] },
  'kling-v2': { text: true, image: true, reference: false, resolutions: ['1k', '2k'] },
  'kling-v2-new': { text: false, image: true, reference: false, resolutions: ['1k', '2k'] },
  'kling-v2-1': { text: true, image: false, reference: false, resolutions: ['1k', '2k'] },
};
export const KLING_IMAGE_RATIOS = ['16:9', '9:16', '1:1', '4:3', '3:4', '3:2', '2:3', '21:9'];
/** Pixels of a picture by resolution (about 1024² or 2048², shaped by the ratio). */
export const KLING_IMAGE_AREA: Record<string, number> = { '1k': 1024 * 1024, '2k': 2048 * 2048 };
export const KLING_IMAGE_MAX_N = 9;

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

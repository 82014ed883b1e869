// Kling video generation: what each model accepts. Plain data, no imports, so the simulator's
// Kling part checks requests against the same table the adapter validates with.

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
/** What a model id outside the table accepts (a newer Kling). */
export const KLING_FALLBACK: KlingModelFacts = { tail: true, sound: true };
export const KLING_RATIOS = ['16:9', '9:16', '1:1'];
/** Durations as Kling spells them: strings. */
export const KLING_DURATIONS = ['5', '10'];
export const KLING_MODES = ['std', 'pro'];
export const KLING_MAX_PROMPT = 2500;
export const KLING_TASK_STATUSES = ['submitted', 'processing', 'succeed', 'failed'];

/**
 * The one account the simulator's Kling part knows (access key → secret key). The simulator
 * channel signs with it when it plays Kling, so the demo exercises the real JWT code path.
 */
export const KLING_SIMULATOR_ACCOUNT = { apiKey: 'ak-simulator', apiSecret: 'sk-simulator-kling-secret' };

// Stability AI's Stable Image API (api.stability.ai/v2beta/stable-image/…) as the simulator's
// Stability part plays it. Plain data, no imports.

export const STABILITY_RATIOS = ['16:9', '1:1', '21:9', '2:3', '3:2', '4:5', '5:4', '9:16', '9:21'];
/** The generate endpoints and what each takes. */
export const STABILITY_SERVICES: Record<string, { formats: string[]; image: boolean; stylePreset: boolean }> = {
  ultra: { formats: ['png', 'jpeg', 'webp'], image: true, stylePreset: false },
  core: { formats: ['png', 'jpeg', 'webp'], image: false, stylePreset: true },
  sd3: { formats: ['png', 'jpeg'], image: true, stylePreset: false },
};
/** The `model` values of /generate/sd3; the turbo and flash ones take no negative_prompt. */
export const STABILITY_SD3_MODELS: Record<string, { negative: boolean }> = {
  'sd3.5-large': { negative: true },
  'sd3.5-large-turbo': { negative: false },
  'sd3.5-medium': { negative: true },
  'sd3.5-flash': { negative: false },
};
export const STABILITY_STYLE_PRESETS = [
  '3d-model', 'analog-film', 'anime', 'cinematic', 'comic-book', 'digital-art', 'enhance', 'fantasy-art', 'isometric', 'line-art', 'low-poly', 'modeling-compound',
  'neon-punk', 'origami', 'photographic', 'pixel-art', 'tile-texture',
];
export const STABILITY_MAX_SEED = 4294967294;

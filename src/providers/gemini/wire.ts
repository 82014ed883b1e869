// Veo through the Gemini API: what each model accepts. Plain data, no imports, so the
// simulator's Veo part checks requests against the same table the adapter validates with.

export interface VeoModelFacts {
  resolutions: string[];
}

export const VEO_MODELS: Record<string, VeoModelFacts> = {
  'veo-3.1-generate-preview': { resolutions: ['720p', '1080p', '4k'] },
  'veo-3.1-fast-generate-preview': { resolutions: ['720p', '1080p', '4k'] },
  'veo-3.1-lite-generate-preview': { resolutions: ['720p', '1080p'] },
};
export const VEO_RATIOS = ['16:9', '9:16'];
export const VEO_DURATIONS = [4, 6, 8];
/** 1080p, 4k and reference images render 8 s only. */
export const VEO_LONG_ONLY_DURATION = 8;
export const VEO_MAX_REFERENCE_IMAGES = 3;
export const VEO_IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/webp'];
/** What a model id outside the table accepts (a newer Veo): the widest known set. */
export const VEO_FALLBACK: VeoModelFacts = { resolutions: ['720p', '1080p', '4k'] };

// Veo through the Gemini API as the simulator's Veo part plays it: what each model accepts. Plain
// data, no imports. The gateway's own view of the same facts is manifest.yaml;
// test/provider-manifests-match-wire.test.ts keeps the two in step.

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
export const VEO_MAX_REFERENCE_IMAGES = 3;
export const VEO_IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/webp'];

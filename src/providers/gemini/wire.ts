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

/**
 * The text of a Gemini `functionResponse.response` (an object). Clients wrap a plain-text tool
 * result in one key — `{result}` (Google's examples and the gateway's own encoding), `{output}`,
 * `{content}`, or the Vercel AI SDK's `{name, content}` — and read as that text; any other object
 * reads as its JSON.
 */
export function functionResponseText(response: unknown, name: string): string {
  if (response && typeof response === 'object' && !Array.isArray(response)) {
    const r = response as Record<string, unknown>;
    const keys = Object.keys(r);
    if (keys.length === 1 && ['result', 'output', 'content'].includes(keys[0]) && typeof r[keys[0]] === 'string') return r[keys[0]] as string;
    if (keys.length === 2 && r.name === name && typeof r.content === 'string') return r.content;
  }
  return JSON.stringify(response ?? {});
}

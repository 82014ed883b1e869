// Runway's video generation as the simulator's Runway part plays it: what each model accepts on
// each endpoint. Plain data, no imports. The gateway's own view of the same facts is
// manifest.yaml; test/unit/provider-manifests-match-wire.test.ts keeps the two in step.

export interface RunwayModelFacts {
  /** Takes text_to_video (promptText alone). */
  text: boolean;
  /** Takes a last frame (promptImage [{position: "last"}]). */
  lastFrame: boolean;
  durations: number[];
  /** Whether `duration` may be left out (else it is required). */
  durationOptional: boolean;
  /** `ratio` values (output pixel sizes "W:H") on image_to_video, and on text_to_video. */
  imageRatios: string[];
  textRatios: string[];
}

const GEN4_RATIOS = ['1280:720', '720:1280', '1104:832', '832:1104', '960:960', '1584:672'];
const VEO_RATIOS = ['1280:720', '720:1280', '1080:1920', '1920:1080'];
const range = (a: number, b: number) => Array.from({ length: b - a + 1 }, (_, i) => a + i);

export const RUNWAY_MODELS: Record<string, RunwayModelFacts> = {
  'gen4.5': { text: true, lastFrame: false, durations: range(2, 10), durationOptional: false, imageRatios: GEN4_RATIOS, textRatios: ['1280:720', '720:1280'] },
  gen4_turbo: { text: false, lastFrame: false, durations: range(2, 10), durationOptional: true, imageRatios: GEN4_RATIOS, textRatios: [] },
  'veo3.1': { text: true, lastFrame: true, durations: [4, 6, 8], durationOptional: true, imageRatios: VEO_RATIOS, textRatios: VEO_RATIOS },
  'veo3.1_fast': { text: true, lastFrame: true, durations: [4, 6, 8], durationOptional: true, imageRatios: VEO_RATIOS, textRatios: VEO_RATIOS },
};
/** The API version every request names in `X-Runway-Version`. */
export const RUNWAY_VERSION = '2024-11-06';

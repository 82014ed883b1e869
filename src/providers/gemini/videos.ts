import type { Target } from '../../upstream/target.js';
import { loadManifest } from '../kit/load.js';
import { withVideos } from '../kit/manifest.js';
import { videoAdapter } from '../kit/video-adapter.js';
import type { VideoGenerationRequest } from '../video-types.js';

/** Veo on the Gemini API's wire format: manifest.yaml beside this file. */
export const GEMINI = withVideos(loadManifest(new URL('./manifest.yaml', import.meta.url), { builtIn: true }));
export const geminiVideos = videoAdapter(GEMINI);

/** The predictLongRunning body; image URLs are fetched and sent inline. */
export async function veoCreateBody(target: Target, req: VideoGenerationRequest, signal?: AbortSignal): Promise<Record<string, unknown>> {
  return geminiVideos.createCall(target.upstreamModel, req, undefined, await geminiVideos.fetchImages(target, req, signal)).body;
}

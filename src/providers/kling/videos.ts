import { loadManifest } from '../kit/load.js';
import { withVideos } from '../kit/manifest.js';
import { videoAdapter } from '../kit/video-adapter.js';
import type { VideoGenerationRequest } from '../video-types.js';

/** Kling's wire format: manifest.yaml beside this file. */
export const KLING = withVideos(loadManifest(new URL('./manifest.yaml', import.meta.url), { builtIn: true }));
export const klingVideos = videoAdapter(KLING);

/** The create path (text2video | image2video) and body in Kling's format. */
export function klingCreate(upstreamModel: string, req: VideoGenerationRequest, callbackUrl?: string): { kind: string; body: Record<string, unknown> } {
  const { variant, body } = klingVideos.createCall(upstreamModel, req, callbackUrl);
  return { kind: variant, body };
}

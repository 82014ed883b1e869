import { loadManifest } from '../kit/load.js';
import { withVideos } from '../kit/manifest.js';
import { videoAdapter } from '../kit/video-adapter.js';
import type { VideoGenerationRequest } from '../video-types.js';

/** Wan on DashScope's wire format: manifest.yaml beside this file. */
export const DASHSCOPE = withVideos(loadManifest(new URL('./manifest.yaml', import.meta.url), { builtIn: true }));
export const dashscopeVideos = videoAdapter(DASHSCOPE);

/** The create path and body in DashScope's format. */
export function wanCreate(upstreamModel: string, req: VideoGenerationRequest): { path: string; body: Record<string, unknown> } {
  const { path, body } = dashscopeVideos.createCall(upstreamModel, req);
  return { path, body };
}

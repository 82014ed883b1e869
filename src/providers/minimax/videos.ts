import { loadManifest } from '../kit/load.js';
import { withVideos } from '../kit/manifest.js';
import { videoAdapter } from '../kit/video-adapter.js';
import type { VideoGenerationRequest } from '../video-types.js';

/** MiniMax Hailuo's wire format: manifest.yaml beside this file. */
export const MINIMAX = withVideos(loadManifest(new URL('./manifest.yaml', import.meta.url), { builtIn: true }));
export const minimaxVideos = videoAdapter(MINIMAX);

/** The create body in MiniMax's format. */
export const hailuoCreateBody = (upstreamModel: string, req: VideoGenerationRequest, callbackUrl?: string) => minimaxVideos.createCall(upstreamModel, req, callbackUrl).body;

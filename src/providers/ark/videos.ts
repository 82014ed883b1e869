import { loadManifest } from '../kit/load.js';
import { withVideos } from '../kit/manifest.js';
import { videoAdapter } from '../kit/video-adapter.js';
import type { VideoGenerationRequest } from '../video-types.js';

/** Volcengine Ark's Seedance wire format: manifest.yaml beside this file. */
export const ARK = withVideos(loadManifest(new URL('./manifest.yaml', import.meta.url), { builtIn: true }));
export const arkVideos = videoAdapter(ARK);

/** Ids per batched read (manifest `videos.list.max_ids`). */
export const ARK_LIST_IDS = arkVideos.getManyMax ?? 1;

/** The create body in Ark's format. */
export const arkCreateBody = (upstreamModel: string, req: VideoGenerationRequest, callbackUrl?: string) => arkVideos.createCall(upstreamModel, req, callbackUrl).body;

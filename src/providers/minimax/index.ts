import type { Provider } from '../provider.js';
import { HAILUO_DEFAULT_MODELS } from './models.js';
import { minimaxVideos } from './videos.js';

/** MiniMax: Hailuo video generation (the result is a file resolved with the key). */
export const minimax: Provider = {
  type: 'minimax',
  videos: minimaxVideos,
  needsBaseUrl: true,
  defaults: {
    baseUrl: 'https://api.minimax.io',
    env: { apiKey: 'MINIMAX_API_KEY' },
    models: HAILUO_DEFAULT_MODELS,
    ownedBy: 'minimax',
    simulated: true,
  },
  // The simulator serves MiniMax's paths (/v1/video_generation, /v1/query/…, /v1/files/…) at its origin.
  simulator: { path: '', claims: { videos: /^(MiniMax-Hailuo-|[TIS]2V-01)/ } },
};

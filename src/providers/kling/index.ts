import type { Provider } from '../provider.js';
import { KLING_DEFAULT_MODELS } from './models.js';
import { klingVideos } from './videos.js';
import { KLING_SIMULATOR_ACCOUNT } from './wire.js';

/** Kuaishou's Kling: video generation, authenticated by a JWT signed per request. */
export const kling: Provider = {
  type: 'kling',
  videos: klingVideos,
  needsBaseUrl: true,
  needsApiSecret: true,
  defaults: {
    baseUrl: 'https://api-singapore.klingai.com',
    env: { apiKey: 'KLING_ACCESS_KEY', apiSecret: 'KLING_SECRET_KEY' },
    models: KLING_DEFAULT_MODELS,
    ownedBy: 'kuaishou',
    simulated: true,
  },
  // The simulator serves Kling's paths (/v1/videos/…) at its origin and knows one account.
  simulator: { path: '', claims: { videos: /^kling-/ }, credentials: KLING_SIMULATOR_ACCOUNT },
};

import type { Provider } from '../provider.js';
import { arkChat } from './chat.js';
import { arkImages } from './images.js';
import { SEEDANCE_MODELS, SEEDREAM_MODELS } from './models.js';
import { arkVideos } from './videos.js';

/** Volcengine Ark: Doubao chat, Seedream images and Seedance video tasks. */
export const ark: Provider = {
  type: 'ark',
  chat: () => arkChat,
  images: arkImages,
  videos: arkVideos,
  needsBaseUrl: true,
  defaults: {
    baseUrl: 'https://ark.cn-beijing.volces.com',
    env: { apiKey: 'ARK_API_KEY' },
    models: { ...SEEDANCE_MODELS, ...SEEDREAM_MODELS },
    ownedBy: 'volcengine',
    simulated: true,
  },
  // The simulator serves Ark's paths (/api/v3/…) at its origin.
  simulator: { path: '', claims: { images: /^doubao-seedream-/, videos: /^doubao-seedance-/ } },
};

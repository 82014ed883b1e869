import type { Provider } from '../provider.js';
import { geminiChat } from './chat.js';
import { VEO_DEFAULT_MODELS } from './models.js';
import { geminiVideos } from './videos.js';

/** Google Gemini API: generateContent chat and Veo video generation (long-running operations). */
export const gemini: Provider = {
  type: 'gemini',
  chat: () => geminiChat,
  videos: geminiVideos,
  needsBaseUrl: true,
  defaults: { baseUrl: 'https://generativelanguage.googleapis.com', env: { apiKey: 'GEMINI_API_KEY' }, models: VEO_DEFAULT_MODELS, ownedBy: 'google', simulated: true },
  // The simulator serves /v1beta at its origin; it plays Veo for the veo-* models.
  simulator: { path: '', claims: { videos: /^veo-/ } },
};

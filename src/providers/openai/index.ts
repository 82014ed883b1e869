import type { Provider } from '../provider.js';
import { openaiChat } from './chat.js';
import { openaiImages } from './images.js';
import { OPENAI_MODELS } from './models.js';

/** OpenAI (and any service speaking its wire format under a /v1 root): chat completions and images. */
export const openai: Provider = {
  type: 'openai',
  chat: () => openaiChat,
  images: openaiImages,
  needsBaseUrl: true,
  defaults: { baseUrl: 'https://api.openai.com/v1', env: { apiKey: 'OPENAI_API_KEY' }, models: OPENAI_MODELS, ownedBy: 'openai' },
  // The simulator serves OpenAI's API under /v1.
  simulator: { path: '/v1', claims: {} },
};

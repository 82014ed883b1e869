import type { Provider } from '../provider.js';
import { openaiChat, openaiResponses } from './chat.js';
import { openaiImages } from './images.js';
import { OPENAI_MODELS } from './models.js';

/** OpenAI (and any service speaking its wire format under a /v1 root): chat completions, responses and images. */
export const openai: Provider = {
  type: 'openai',
  // Chat Completions, or the Responses API when the channel says `upstream_format: responses`.
  chat: (format) => (format === 'responses' ? openaiResponses : openaiChat),
  chatFormats: ['openai', 'responses'],
  images: openaiImages,
  needsBaseUrl: true,
  defaults: { baseUrl: 'https://api.openai.com/v1', env: { apiKey: 'OPENAI_API_KEY' }, models: OPENAI_MODELS, ownedBy: 'openai' },
  // The simulator serves OpenAI's API under /v1.
  simulator: { path: '/v1', claims: {} },
};

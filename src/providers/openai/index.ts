import type { Provider } from '../provider.js';
import { imageAdapter } from '../kit/image-adapter.js';
import { loadManifest } from '../kit/load.js';
import { offeredModels } from '../kit/models.js';
import { openaiChat, openaiResponses } from './chat.js';
import { OPENAI_MODELS } from './models.js';

/** OpenAI Images' wire format: manifest.yaml beside this file. */
export const OPENAI = loadManifest(new URL('./manifest.yaml', import.meta.url), { builtIn: true });

/** OpenAI (and any service speaking its wire format under a /v1 root): chat completions, responses and images. */
export const openai: Provider = {
  type: 'openai',
  // Chat Completions, or the Responses API when the channel says `upstream_format: responses`.
  chat: (format) => (format === 'responses' ? openaiResponses : openaiChat),
  chatFormats: ['openai', 'responses'],
  images: imageAdapter(OPENAI),
  needsBaseUrl: true,
  defaults: { baseUrl: 'https://api.openai.com/v1', env: { apiKey: 'OPENAI_API_KEY' }, models: { ...OPENAI_MODELS, ...offeredModels(OPENAI) }, ownedBy: 'openai' },
  // The simulator serves OpenAI's API under /v1.
  simulator: { path: '/v1', claims: {} },
};

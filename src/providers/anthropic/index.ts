import type { Provider } from '../provider.js';
import { anthropicChat } from './chat.js';
import { ANTHROPIC_MODELS } from './models.js';

/** Anthropic: the Messages API. */
export const anthropic: Provider = {
  type: 'anthropic',
  chat: () => anthropicChat,
  needsBaseUrl: true,
  defaults: { baseUrl: 'https://api.anthropic.com', env: { apiKey: 'ANTHROPIC_API_KEY' }, models: ANTHROPIC_MODELS, ownedBy: 'anthropic' },
  // The simulator serves /v1/messages at its origin.
  simulator: { path: '', claims: {} },
};

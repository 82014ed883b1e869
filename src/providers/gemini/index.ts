import type { Provider } from '../provider.js';
import { geminiChat } from './chat.js';

/** Google Gemini API: generateContent chat. */
export const gemini: Provider = {
  type: 'gemini',
  chat: () => geminiChat,
  needsBaseUrl: true,
  defaults: { baseUrl: 'https://generativelanguage.googleapis.com', env: { apiKey: 'GEMINI_API_KEY' }, models: {}, ownedBy: 'google' },
  // The simulator serves /v1beta at its origin.
  simulator: { path: '', claims: {} },
};

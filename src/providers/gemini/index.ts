import type { Provider } from '../provider.js';
import { kitProvider } from '../kit/provider.js';
import { geminiChat } from './chat.js';
import { GEMINI } from './videos.js';

/** Google Gemini API: generateContent chat (TypeScript) and Veo video generation (manifest.yaml). */
export const gemini: Provider = { ...kitProvider(GEMINI), chat: () => geminiChat };

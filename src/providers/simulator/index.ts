import type { Provider } from '../provider.js';
import type { ChatFormat } from '../../formats/chat-stream.js';
import { SIMULATOR_MODELS } from './wire.js';

const CHAT_PLAYER: Record<ChatFormat, string> = { openai: 'openai', responses: 'openai', anthropic: 'anthropic', gemini: 'gemini' };

/**
 * The simulator (built in, or `mediagate simulator` elsewhere) speaks no wire format of its own:
 * it plays the provider that claims a model (a Seedance model → Ark), and otherwise OpenAI for
 * images, Ark for video, and for chat its `upstream_format` or else the client's own format, each
 * at the real provider's path. A channel without base_url points at the embedded simulator.
 */
export const simulator: Provider = {
  type: 'simulator',
  needsBaseUrl: false,
  defaults: { models: SIMULATOR_MODELS, ownedBy: 'simulator' },
  chatFormats: ['openai', 'responses', 'anthropic', 'gemini'],
  plays: { chat: (format) => CHAT_PLAYER[format], images: 'openai', videos: 'ark' },
};

import type { Provider } from '../provider.js';
import { SIMULATOR_MODELS } from './wire.js';

/**
 * The simulator (built in, or `mediagate simulator` elsewhere) speaks no wire format of its own:
 * it plays the provider that claims a model (a Seedance model → Ark), and otherwise OpenAI for
 * images, Ark for video, and for chat the client's own format. A channel without base_url points
 * at the embedded simulator.
 */
export const simulator: Provider = {
  type: 'simulator',
  needsBaseUrl: false,
  defaults: { models: SIMULATOR_MODELS, ownedBy: 'simulator' },
  plays: { chat: (client) => client, images: 'openai', videos: 'ark' },
};

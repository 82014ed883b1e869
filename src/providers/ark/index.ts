import type { Provider } from '../provider.js';
import { kitProvider } from '../kit/provider.js';
import { arkChat } from './chat.js';
import { ARK } from './videos.js';

/** Volcengine Ark: Doubao chat (TypeScript), Seedance video tasks and Seedream images (manifest.yaml). */
export const ark: Provider = { ...kitProvider(ARK), chat: () => arkChat };

import type { Provider } from '../provider.js';
import { kitProvider } from '../kit/provider.js';
import { arkChat } from './chat.js';
import { arkImages } from './images.js';
import { SEEDREAM_MODELS } from './models.js';
import { ARK } from './videos.js';

const provider = kitProvider(ARK);

/** Volcengine Ark: Doubao chat and Seedream images (TypeScript), Seedance video tasks (manifest.yaml). */
export const ark: Provider = {
  ...provider,
  chat: () => arkChat,
  images: arkImages,
  defaults: { ...provider.defaults, models: { ...provider.defaults.models, ...SEEDREAM_MODELS } },
};

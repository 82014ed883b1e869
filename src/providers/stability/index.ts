import type { Provider } from '../provider.js';
import { loadManifest } from '../kit/load.js';
import { kitProvider } from '../kit/provider.js';

/** Stability AI: image generation and editing, its wire format in manifest.yaml beside this file. */
export const STABILITY = loadManifest(new URL('./manifest.yaml', import.meta.url), { builtIn: true });
export const stability: Provider = kitProvider(STABILITY);

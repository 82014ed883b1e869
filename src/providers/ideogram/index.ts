import type { Provider } from '../provider.js';
import { loadManifest } from '../kit/load.js';
import { kitProvider } from '../kit/provider.js';

/** Ideogram: image generation and editing, its wire format in manifest.yaml beside this file. */
export const IDEOGRAM = loadManifest(new URL('./manifest.yaml', import.meta.url), { builtIn: true });
export const ideogram: Provider = kitProvider(IDEOGRAM);

import { loadManifest } from '../kit/load.js';

/** fal's queue API: manifest.yaml beside this file. */
export const FAL = loadManifest(new URL('./manifest.yaml', import.meta.url), { builtIn: true });

import { loadManifest } from '../kit/load.js';

/** Replicate's predictions API: manifest.yaml beside this file. */
export const REPLICATE = loadManifest(new URL('./manifest.yaml', import.meta.url), { builtIn: true });

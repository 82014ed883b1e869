import { loadManifest } from '../kit/load.js';

/** Pixverse's wire format: manifest.yaml beside this file. */
export const PIXVERSE = loadManifest(new URL('./manifest.yaml', import.meta.url), { builtIn: true });

import { loadManifest } from '../kit/load.js';

/** Luma Dream Machine's wire format: manifest.yaml beside this file. */
export const LUMA = loadManifest(new URL('./manifest.yaml', import.meta.url), { builtIn: true });

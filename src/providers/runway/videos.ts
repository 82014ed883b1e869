import { loadManifest } from '../kit/load.js';

/** Runway's wire format: manifest.yaml beside this file. */
export const RUNWAY = loadManifest(new URL('./manifest.yaml', import.meta.url), { builtIn: true });

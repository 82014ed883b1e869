import { loadManifest } from '../kit/load.js';

/** Vidu's wire format: manifest.yaml beside this file. */
export const VIDU = loadManifest(new URL('./manifest.yaml', import.meta.url), { builtIn: true });

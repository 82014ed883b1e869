import { loadManifest } from '../kit/load.js';

/** Veo on Vertex AI's wire format: manifest.yaml beside this file. */
export const VERTEX = loadManifest(new URL('./manifest.yaml', import.meta.url), { builtIn: true });

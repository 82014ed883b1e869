import { loadManifest } from '../kit/load.js';

/** Jimeng's wire format on Volcengine's visual API: manifest.yaml beside this file. */
export const JIMENG = loadManifest(new URL('./manifest.yaml', import.meta.url), { builtIn: true });

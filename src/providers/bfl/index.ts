import { loadManifest } from '../kit/load.js';
import { kitProvider } from '../kit/provider.js';

/** Black Forest Labs FLUX image models (queued tasks with a polling URL): manifest.yaml beside this file. */
export const BFL = loadManifest(new URL('./manifest.yaml', import.meta.url), { builtIn: true });
export const bfl = kitProvider(BFL);

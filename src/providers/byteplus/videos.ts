import { loadManifest } from '../kit/load.js';
import type { Manifest } from '../kit/manifest.js';
import { ARK } from '../ark/videos.js';

/** The fields of manifest.yaml beside this file (BytePlus's own: name, defaults, models). */
const own = loadManifest(new URL('./manifest.yaml', import.meta.url), { builtIn: true }) as Pick<Manifest, 'type' | 'name' | 'owned_by' | 'defaults' | 'simulator' | 'models'>;

/** BytePlus ModelArk: Ark's manifest with BytePlus's fields laid over it (its models before Ark's rules). */
export const BYTEPLUS: Manifest = { ...ARK, ...own, models: [...own.models, ...ARK.models] };

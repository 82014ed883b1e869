import { loadManifest } from '../kit/load.js';
import type { Manifest } from '../kit/manifest.js';
import { ARK } from '../ark/videos.js';

/** The fields of manifest.yaml beside this file (BytePlus's own: name, defaults, models). */
const own = loadManifest(new URL('./manifest.yaml', import.meta.url), { builtIn: true }) as Pick<Manifest, 'type' | 'name' | 'owned_by' | 'defaults' | 'simulator' | 'models'>;

/**
 * BytePlus ModelArk: Ark's video manifest with BytePlus's fields laid over it (its models before
 * Ark's rules). Ark's Seedream images stay Ark's: BytePlus's image model ids are its own.
 */
const { images: _images, ...videos } = ARK;
export const BYTEPLUS: Manifest = { ...videos, ...own, models: [...own.models, ...ARK.models.filter((e) => !e.image)] };

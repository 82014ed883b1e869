import { offeredModels } from '../kit/models.js';
import { JIMENG } from './videos.js';

/** The Jimeng models the embedded default offers (manifest.yaml, `offer`). */
export const JIMENG_DEFAULT_MODELS = offeredModels(JIMENG);

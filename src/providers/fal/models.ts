import { offeredModels } from '../kit/models.js';
import { FAL } from './videos.js';

/** The fal models the embedded default offers (manifest.yaml, `offer`). */
export const FAL_DEFAULT_MODELS = offeredModels(FAL);

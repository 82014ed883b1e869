import { offeredModels } from '../kit/models.js';
import { REPLICATE } from './videos.js';

/** The Replicate models the embedded default offers (manifest.yaml, `offer`). */
export const REPLICATE_DEFAULT_MODELS = offeredModels(REPLICATE);

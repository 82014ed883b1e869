import { offeredModels } from '../kit/models.js';
import { LUMA } from './videos.js';

/** The Luma models the embedded default offers (manifest.yaml, `offer`). */
export const LUMA_DEFAULT_MODELS = offeredModels(LUMA);

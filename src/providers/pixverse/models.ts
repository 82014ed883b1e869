import { offeredModels } from '../kit/models.js';
import { PIXVERSE } from './videos.js';

/** The Pixverse models the embedded default offers (manifest.yaml, `offer`). */
export const PIXVERSE_DEFAULT_MODELS = offeredModels(PIXVERSE);

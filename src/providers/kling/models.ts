import { offeredModels } from '../kit/models.js';
import { KLING } from './videos.js';

/** The Kling models the embedded default offers (manifest.yaml, `offer`). */
export const KLING_DEFAULT_MODELS = offeredModels(KLING);

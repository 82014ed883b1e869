import { offeredModels } from '../kit/models.js';
import { RUNWAY } from './videos.js';

/** The Runway models the embedded default offers (manifest.yaml, `offer`). */
export const RUNWAY_DEFAULT_MODELS = offeredModels(RUNWAY);

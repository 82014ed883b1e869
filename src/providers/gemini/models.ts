import { offeredModels } from '../kit/models.js';
import { GEMINI } from './videos.js';

/** The Veo models the embedded default offers (manifest.yaml, `offer`). */
export const VEO_DEFAULT_MODELS = offeredModels(GEMINI);

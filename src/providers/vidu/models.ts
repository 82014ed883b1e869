import { offeredModels } from '../kit/models.js';
import { VIDU } from './videos.js';

/** The Vidu models the embedded default offers (manifest.yaml, `offer`). */
export const VIDU_DEFAULT_MODELS = offeredModels(VIDU);

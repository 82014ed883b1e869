import { offeredModels } from '../kit/models.js';
import { BYTEPLUS } from './videos.js';

/** The Seedance models the embedded default offers on BytePlus (manifest.yaml, `offer`). */
export const BYTEPLUS_DEFAULT_MODELS = offeredModels(BYTEPLUS);

import { offeredModels } from '../kit/models.js';
import { MINIMAX } from './videos.js';

/** The Hailuo models the embedded default offers (manifest.yaml, `offer`). */
export const HAILUO_DEFAULT_MODELS = offeredModels(MINIMAX);

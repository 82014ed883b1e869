import { offeredModels } from '../kit/models.js';
import { DASHSCOPE } from './videos.js';

/** The Wan models the embedded default offers (manifest.yaml, `offer`). */
export const WAN_DEFAULT_MODELS = offeredModels(DASHSCOPE);

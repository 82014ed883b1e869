import { offeredModels } from '../kit/models.js';
import { VERTEX } from './videos.js';

/** The Veo models on Vertex AI the embedded default offers (manifest.yaml, `offer`). */
export const VERTEX_DEFAULT_MODELS = offeredModels(VERTEX);

import type { ModelConfig } from '../../config/schema.js';
import { offeredModels } from '../kit/models.js';
import { ARK } from './videos.js';

/** The Seedance models the embedded default offers (manifest.yaml, `offer`). */
export const SEEDANCE_MODELS = offeredModels(ARK);

// Seedream image models (Ark images/generations), USD per generated image, list prices at the
// time of writing; operators override them in their file.
export const SEEDREAM_MODELS: Record<string, ModelConfig> = {
  'doubao-seedream-4-0-250828': { kind: 'image', owned_by: 'volcengine', price: { per_image: 0.03 } },
};

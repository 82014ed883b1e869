import { offeredModels } from '../kit/models.js';
import { ARK } from './videos.js';

/** The Seedance (video) models the embedded default offers (manifest.yaml, `offer`). */
export const SEEDANCE_MODELS = Object.fromEntries(Object.entries(offeredModels(ARK)).filter(([, m]) => m.kind === 'video'));

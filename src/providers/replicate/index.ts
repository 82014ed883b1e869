import { kitProvider } from '../kit/provider.js';
import { REPLICATE } from './videos.js';

/** Replicate: predictions on any video model, official (by name) or by version. */
export const replicate = kitProvider(REPLICATE);

import { kitProvider } from '../kit/provider.js';
import { LUMA } from './videos.js';

/** Luma Dream Machine: Ray generations from text or keyframes (first, last). */
export const luma = kitProvider(LUMA);

import { kitProvider } from '../kit/provider.js';
import { PIXVERSE } from './videos.js';

/** Pixverse: text, image and transition (first + last frame) video; images are uploaded first. */
export const pixverse = kitProvider(PIXVERSE);

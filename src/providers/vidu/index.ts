import { kitProvider } from '../kit/provider.js';
import { VIDU } from './videos.js';

/** Shengshu's Vidu: text, image, start-end and reference-to-video, `Token` auth. */
export const vidu = kitProvider(VIDU);

import { kitProvider } from '../kit/provider.js';
import { RUNWAY } from './videos.js';

/** Runway: gen4 (and Veo 3.1 through Runway) text and image to video, with its version header. */
export const runway = kitProvider(RUNWAY);

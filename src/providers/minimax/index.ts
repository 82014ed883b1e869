import { kitProvider } from '../kit/provider.js';
import { MINIMAX } from './videos.js';

/** MiniMax: Hailuo video generation (the result is a file resolved with the key). */
export const minimax = kitProvider(MINIMAX);

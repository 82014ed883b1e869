import { kitProvider } from '../kit/provider.js';
import { FAL } from './videos.js';

/** fal: any video model endpoint through its queue (status, then the result, by request id). */
export const fal = kitProvider(FAL);

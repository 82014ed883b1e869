import { kitProvider } from '../kit/provider.js';
import { BYTEPLUS } from './videos.js';

/** BytePlus ModelArk: Seedance video tasks in Ark's wire format, BytePlus's base URL and model ids. */
export const byteplus = kitProvider(BYTEPLUS);

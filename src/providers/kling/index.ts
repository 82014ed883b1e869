import type { Provider } from '../provider.js';
import { kitProvider } from '../kit/provider.js';
import { KLING } from './videos.js';
import { KLING_SIMULATOR_ACCOUNT } from './wire.js';

const provider = kitProvider(KLING);

/**
 * Kuaishou's Kling: video generation, authenticated by a JWT signed per request. A simulator
 * channel signs with the one account the simulator knows, so the real signing code runs there.
 */
export const kling: Provider = { ...provider, simulator: provider.simulator && { ...provider.simulator, credentials: KLING_SIMULATOR_ACCOUNT } };

import type { Provider } from '../provider.js';
import { kitProvider } from '../kit/provider.js';
import { JIMENG } from './videos.js';
import { JIMENG_SIMULATOR_ACCOUNT } from './wire.js';

const provider = kitProvider(JIMENG);

/**
 * Jimeng video generation on Volcengine's visual API: every request signed (HMAC-SHA256, the
 * Volcengine V4 variant). A simulator channel signs with the one account the simulator knows.
 */
export const jimeng: Provider = { ...provider, simulator: provider.simulator && { ...provider.simulator, credentials: JIMENG_SIMULATOR_ACCOUNT } };

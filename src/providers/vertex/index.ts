import type { Provider } from '../provider.js';
import { kitProvider } from '../kit/provider.js';
import { VERTEX } from './videos.js';
import { VERTEX_SIMULATOR_ACCOUNT } from './wire.js';

const provider = kitProvider(VERTEX);
const { client_email, project_id, private_key } = VERTEX_SIMULATOR_ACCOUNT;

/**
 * Veo on Vertex AI: a service-account key traded for an OAuth token. A simulator channel uses the
 * one service account the simulator knows, its token endpoint and its Cloud Storage.
 */
export const vertex: Provider = {
  ...provider,
  simulator: provider.simulator && {
    ...provider.simulator,
    credentials: (origin) => ({
      apiKey: JSON.stringify({ type: 'service_account', project_id, client_email, private_key, token_uri: `${origin}/token` }),
      apiSecret: '',
      settings: { project: project_id, region: 'us-central1', storage_url: origin },
    }),
  },
};

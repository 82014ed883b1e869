import type { Provider } from '../provider.js';
import { imageAdapter } from '../kit/image-adapter.js';
import { loadManifest } from '../kit/load.js';
import { offeredModels } from '../kit/models.js';
import { openaiChat, openaiResponses } from './chat.js';
import { OPENAI_MODELS } from './models.js';
import { OPENAI_COMPATIBLE_BALANCES } from './balances.js';
import { balanceUrl, readBalance, type BalanceCapability } from '../balance.js';
import { jsonCall } from '../video-support.js';
import { statusFailure } from '../../upstream/status-failure.js';

const SHAPES = Object.keys(OPENAI_COMPATIBLE_BALANCES);

/** The balance read `settings.balance` names (OpenAI itself has no balance endpoint for API keys). */
const balance: BalanceCapability = {
  describe(settings) {
    const spec = settings.balance ? OPENAI_COMPATIBLE_BALANCES[settings.balance] : undefined;
    return spec ? `GET ${spec.from === 'origin' ? '' : '{base_url}'}${spec.path} (${spec.service})` : undefined;
  },
  async read(call, target) {
    const spec = OPENAI_COMPATIBLE_BALANCES[target.settings?.balance ?? ''];
    if (!spec) throw new Error('the channel names no balance read (settings.balance)');
    const failure = (res: Parameters<typeof statusFailure>[0]) =>
      statusFailure(res, (b: unknown) => {
        const e = (b as { error?: { message?: unknown; code?: unknown } } | null)?.error;
        return { message: typeof e?.message === 'string' ? e.message : '', code: typeof e?.code === 'string' ? e.code : '' };
      });
    const out = await jsonCall(call, { url: balanceUrl(spec, target.baseUrl), method: 'GET', headers: { authorization: `Bearer ${target.apiKey}`, accept: 'application/json' } }, failure);
    return readBalance(spec, out);
  },
};

/** OpenAI Images' wire format: manifest.yaml beside this file. */
export const OPENAI = loadManifest(new URL('./manifest.yaml', import.meta.url), { builtIn: true });

/** OpenAI (and any service speaking its wire format under a /v1 root): chat completions, responses and images. */
export const openai: Provider = {
  type: 'openai',
  // Chat Completions, or the Responses API when the channel says `upstream_format: responses`.
  chat: (format) => (format === 'responses' ? openaiResponses : openaiChat),
  chatFormats: ['openai', 'responses'],
  images: imageAdapter(OPENAI),
  needsBaseUrl: true,
  balance,
  settings: {
    balance: { pattern: `^(${SHAPES.join('|')})$`, description: `the balance read of the service behind the channel: ${SHAPES.join(', ')}` },
  },
  defaults: { baseUrl: 'https://api.openai.com/v1', env: { apiKey: 'OPENAI_API_KEY' }, models: { ...OPENAI_MODELS, ...offeredModels(OPENAI) }, ownedBy: 'openai' },
  // The simulator serves OpenAI's API under /v1.
  simulator: { path: '/v1', claims: {} },
};

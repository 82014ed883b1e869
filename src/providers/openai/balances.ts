import type { BalanceSpec } from '../balance.js';

// The balance reads of services that speak OpenAI's chat format, for an `openai` channel's
// `settings.balance` (docs/channels.md, "Balance"). Paths are after the channel's base_url (the
// service's /v1 root), or after its origin where the service keeps the read outside that root.

export const OPENAI_COMPATIBLE_BALANCES: Record<string, BalanceSpec & { service: string }> = {
  // GET https://api.deepseek.com/user/balance → balance_infos[] per currency, amounts as text.
  deepseek: {
    service: 'DeepSeek',
    path: '/user/balance',
    from: 'origin',
    amounts: [{ label: 'total balance', items: 'balance_infos', path: 'total_balance', unit_path: 'currency' }],
  },
  // GET https://api.moonshot.ai/v1/users/me/balance → data.available_balance (cash and vouchers), USD.
  moonshot: {
    service: 'Moonshot (api.moonshot.ai)',
    path: '/users/me/balance',
    amounts: [{ label: 'available balance', path: 'data.available_balance', unit: 'USD' }],
  },
  // The same read on the China platform (api.moonshot.cn), in CNY.
  'moonshot-cn': {
    service: 'Moonshot (api.moonshot.cn)',
    path: '/users/me/balance',
    amounts: [{ label: 'available balance', path: 'data.available_balance', unit: 'CNY' }],
  },
  // GET https://openrouter.ai/api/v1/credits → data.total_credits − data.total_usage, USD; needs a management key.
  openrouter: {
    service: 'OpenRouter',
    path: '/credits',
    amounts: [{ label: 'credits left', path: 'data.total_credits', minus: 'data.total_usage', unit: 'USD' }],
  },
};

import { sendJson, type SimContext, type SimRoute } from './router.js';
import { openaiError } from './shapes.js';

// Balance reads of services that speak OpenAI's chat format, each in its own wire format (from the
// provider's API reference). A channel of type `openai` pointing at the simulator's /v1 reads them
// with `settings.balance`:
//   GET /user/balance          (DeepSeek, at the origin) → {is_available, balance_infos:[{currency, total_balance, granted_balance, topped_up_balance}]}
//   GET /v1/users/me/balance   (Moonshot / Kimi)         → {code:0, data:{available_balance, voucher_balance, cash_balance}, scode, status}
//   GET /v1/credits            (OpenRouter)              → {data:{total_credits, total_usage}}
// Each needs `Authorization: Bearer <key>` (a key holding "revoked" is refused with 401), takes no
// query and no body.

function keyed(ctx: SimContext): boolean {
  const m = /^Bearer (\S+)$/.exec(String(ctx.req.headers.authorization ?? ''));
  if (m && !m[1].includes('revoked')) return true;
  sendJson(ctx.res, 401, openaiError('Authentication Fails, Your api key is invalid', 'invalid_api_key'));
  return false;
}

function plain(ctx: SimContext): boolean {
  if (!ctx.url.search && ctx.body.length === 0) return true;
  sendJson(ctx.res, 400, openaiError('this endpoint takes no query parameters and no body', 'invalid_request_error'));
  return false;
}

export function balanceRoutes(): SimRoute[] {
  return [
    {
      name: 'deepseek.balance',
      method: 'GET',
      pattern: /^\/user\/balance$/,
      auth: true,
      authenticate: keyed,
      handle(ctx) {
        if (!plain(ctx)) return;
        sendJson(ctx.res, 200, {
          is_available: true,
          balance_infos: [
            { currency: 'CNY', total_balance: '110.00', granted_balance: '10.00', topped_up_balance: '100.00' },
            { currency: 'USD', total_balance: '15.50', granted_balance: '0.00', topped_up_balance: '15.50' },
          ],
        });
      },
    },
    {
      name: 'moonshot.balance',
      method: 'GET',
      pattern: /^\/v1\/users\/me\/balance$/,
      auth: true,
      authenticate: keyed,
      handle(ctx) {
        if (!plain(ctx)) return;
        sendJson(ctx.res, 200, { code: 0, data: { available_balance: 49.58894, voucher_balance: 46.58893, cash_balance: 3.00001 }, scode: '0x0', status: true });
      },
    },
    {
      name: 'openrouter.credits',
      method: 'GET',
      pattern: /^\/v1\/credits$/,
      auth: true,
      authenticate: keyed,
      handle(ctx) {
        if (!plain(ctx)) return;
        sendJson(ctx.res, 200, { data: { total_credits: 100.5, total_usage: 25.75 } });
      },
    },
  ];
}

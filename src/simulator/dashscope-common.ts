import { sendJson, type SimContext } from './router.js';
import { uuid } from './video-common.js';

// What DashScope's simulator parts (Wan video, Wan and Qwen images) share: the error body, the
// bearer key check and the errors of the simulator's fault injection in DashScope's words.

export function dashscopeError(code: string, message: string): unknown {
  return { request_id: uuid(), code, message };
}

export function dashscopeInvalid(ctx: SimContext, message: string, code = 'InvalidParameter'): undefined {
  sendJson(ctx.res, 400, dashscopeError(code, message));
  return undefined;
}

export function dashscopeErrorFor(status: number, message: string): unknown {
  if (status === 429) return dashscopeError('Throttling.RateQuota', 'Requests rate limit exceeded, please try again later.');
  if (status === 401) return dashscopeError('InvalidApiKey', 'Invalid API-key provided.');
  if (status >= 500) return dashscopeError('InternalError', `An internal error has occured, please try again later. (${message})`);
  return dashscopeError('InvalidParameter', message);
}

export function dashscopeAuthenticate(ctx: SimContext): boolean {
  if (/^Bearer \S+$/.test(String(ctx.req.headers.authorization ?? ''))) return true;
  sendJson(ctx.res, 401, dashscopeError('InvalidApiKey', 'No API-key provided.'));
  return false;
}

/** Asynchronous-only endpoints refuse a call without `X-DashScope-Async: enable`. */
export function dashscopeAsync(ctx: SimContext): boolean {
  if (String(ctx.req.headers['x-dashscope-async'] ?? '').toLowerCase() === 'enable') return true;
  sendJson(ctx.res, 403, dashscopeError('AccessDenied', 'current user api does not support synchronous calls'));
  return false;
}

/** Beijing wall-clock time as DashScope writes it ("2025-07-27 21:05:15.212"). */
export const dashscopeStamp = (ms: number) => new Date(ms + 8 * 3600_000).toISOString().replace('T', ' ').replace('Z', '');

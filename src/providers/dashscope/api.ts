import type { Dispatcher } from 'undici';
import type { Target } from '../../upstream/target.js';
import { statusFailure } from '../../upstream/status-failure.js';
import type { UpstreamFailure } from '../../upstream/failure.js';

// DashScope (Alibaba Model Studio): base_url is the region's origin
// (https://dashscope-intl.aliyuncs.com Singapore, https://dashscope.aliyuncs.com Beijing,
// https://dashscope-us.aliyuncs.com US; keys are per region); paths start with /api/v1; Bearer
// auth; a task is created asynchronously only with `X-DashScope-Async: enable`. Errors are
// {request_id, code, message}: InvalidParameter, DataInspectionFailed (moderation), InvalidApiKey,
// Arrearage, Throttling.*.

export function dashscopeUrl(target: Target, path: string): string {
  return `${target.baseUrl}/api/v1${path}`;
}

export function dashscopeHeaders(target: Target, async = false): Record<string, string> {
  const h: Record<string, string> = { authorization: `Bearer ${target.apiKey}`, 'content-type': 'application/json', accept: 'application/json' };
  if (async) h['x-dashscope-async'] = 'enable';
  return h;
}

export function dashscopeFailure(res: Dispatcher.ResponseData): Promise<UpstreamFailure> {
  return statusFailure(res, (b: { code?: string; message?: string }) => ({ message: b.message, code: b.code }));
}

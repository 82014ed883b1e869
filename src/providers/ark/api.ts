import type { Dispatcher } from 'undici';
import type { Target } from '../../relay/relay.js';
import { UpstreamFailure, readText, retryAfterSeconds } from '../../relay/upstream.js';

// Volcengine Ark: base_url is the origin (https://ark.cn-beijing.volces.com); paths start with
// /api/v3; Bearer auth; errors are {"error":{"code","message","param","type"}}.

export function arkUrl(target: Target, path: string): string {
  return `${target.baseUrl}/api/v3${path}`;
}

export function arkHeaders(target: Target): Record<string, string> {
  return { authorization: `Bearer ${target.apiKey}`, 'content-type': 'application/json', accept: 'application/json' };
}

export async function arkFailure(res: Dispatcher.ResponseData): Promise<UpstreamFailure> {
  const text = await readText(res).catch(() => '');
  let message = `HTTP ${res.statusCode}`;
  let code = '';
  try {
    const body = JSON.parse(text) as { error?: { message?: string; code?: string } };
    if (body.error?.message) message = body.error.message;
    code = body.error?.code ?? '';
  } catch {
    // not JSON
  }
  return new UpstreamFailure('status', message, res.statusCode, code, retryAfterSeconds(res.headers));
}

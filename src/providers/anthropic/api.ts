import type { Dispatcher } from 'undici';
import type { Target } from '../../relay/relay.js';
import { UpstreamFailure, readText, retryAfterSeconds } from '../../relay/upstream.js';

// Anthropic: base_url is the origin (https://api.anthropic.com); x-api-key auth with the
// anthropic-version header; errors are {"type":"error","error":{"type","message"}}.

export const ANTHROPIC_VERSION = '2023-06-01';

export function anthropicUrl(target: Target, path: string): string {
  return `${target.baseUrl}${path}`;
}

export function anthropicHeaders(target: Target): Record<string, string> {
  return {
    'x-api-key': target.apiKey,
    'anthropic-version': ANTHROPIC_VERSION,
    'content-type': 'application/json',
    accept: 'application/json',
  };
}

export async function anthropicFailure(res: Dispatcher.ResponseData): Promise<UpstreamFailure> {
  const text = await readText(res).catch(() => '');
  let message = `HTTP ${res.statusCode}`;
  let type = '';
  try {
    const body = JSON.parse(text) as { error?: { message?: string; type?: string } };
    if (body.error?.message) message = body.error.message;
    type = body.error?.type ?? '';
  } catch {
    // not JSON
  }
  // 529 overloaded_error behaves like a 503.
  return new UpstreamFailure('status', message, res.statusCode, type, retryAfterSeconds(res.headers));
}

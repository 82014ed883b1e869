import type { Target } from '../../upstream/target.js';
import { statusFailure, type ErrorAnswer } from '../../upstream/status-failure.js';
import type { UpstreamFailure } from '../../upstream/failure.js';

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

// 529 overloaded_error is retryable like a 503 (UpstreamFailure.retryable: any 5xx).
export function anthropicFailure(res: ErrorAnswer): Promise<UpstreamFailure> {
  return statusFailure(res, (b: { error?: { message?: string; type?: string } }) => ({ message: b.error?.message, code: b.error?.type }));
}

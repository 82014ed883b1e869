import type { Target } from '../../upstream/target.js';
import { statusFailure, type ErrorAnswer } from '../../upstream/status-failure.js';
import type { UpstreamFailure } from '../../upstream/failure.js';

// Volcengine Ark: base_url is the origin (https://ark.cn-beijing.volces.com); paths start with
// /api/v3; Bearer auth; errors are {"error":{"code","message","param","type"}}.

export function arkUrl(target: Target, path: string): string {
  return `${target.baseUrl}/api/v3${path}`;
}

export function arkHeaders(target: Target): Record<string, string> {
  return { authorization: `Bearer ${target.apiKey}`, 'content-type': 'application/json', accept: 'application/json' };
}

export function arkFailure(res: ErrorAnswer): Promise<UpstreamFailure> {
  return statusFailure(res, (b: { error?: { message?: string; code?: string } }) => ({ message: b.error?.message, code: b.error?.code }));
}

import type { Target } from '../../upstream/target.js';
import { statusFailure, type ErrorAnswer } from '../../upstream/status-failure.js';
import type { UpstreamFailure } from '../../upstream/failure.js';

// Google Gemini API: base_url is the origin (https://generativelanguage.googleapis.com); paths
// start with /v1beta; the key goes in x-goog-api-key; errors are {"error":{"code","message","status"}}.

export function geminiUrl(target: Target, path: string): string {
  return `${target.baseUrl}/v1beta${path}`;
}

export function geminiHeaders(target: Target): Record<string, string> {
  return { 'x-goog-api-key': target.apiKey, 'content-type': 'application/json', accept: 'application/json' };
}

export function geminiFailure(res: ErrorAnswer): Promise<UpstreamFailure> {
  return statusFailure(res, (b: { error?: { message?: string; status?: string } }) => ({ message: b.error?.message, code: b.error?.status }));
}

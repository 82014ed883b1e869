import type { Target } from '../../upstream/target.js';
import { statusFailure, type ErrorAnswer } from '../../upstream/status-failure.js';
import type { UpstreamFailure } from '../../upstream/failure.js';

// OpenAI: base_url is the API root including /v1 (https://api.openai.com/v1); Bearer auth;
// errors are {"error":{"message","type","param","code"}}.

export function openaiUrl(target: Target, path: string): string {
  return `${target.baseUrl}${path}`;
}

export function openaiHeaders(target: Target, contentType = 'application/json'): Record<string, string> {
  const h: Record<string, string> = { authorization: `Bearer ${target.apiKey}`, accept: 'application/json' };
  if (contentType) h['content-type'] = contentType;
  return h;
}

/** Turns a non-2xx OpenAI answer into an UpstreamFailure carrying the provider's message. */
export function openaiFailure(res: ErrorAnswer): Promise<UpstreamFailure> {
  return statusFailure(res, (b: { error?: { message?: string; code?: string | null; type?: string } }) => ({
    message: b.error?.message,
    code: b.error?.code ?? b.error?.type,
  }));
}

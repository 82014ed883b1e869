import type { Dispatcher } from 'undici';
import type { Target } from '../../relay/relay.js';
import { UpstreamFailure, readText, retryAfterSeconds } from '../../relay/upstream.js';

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
export async function openaiFailure(res: Dispatcher.ResponseData): Promise<UpstreamFailure> {
  const text = await readText(res).catch(() => '');
  let message = `HTTP ${res.statusCode}`;
  let code = '';
  try {
    const body = JSON.parse(text) as { error?: { message?: string; code?: string | null; type?: string } };
    if (body.error?.message) message = body.error.message;
    code = body.error?.code ?? body.error?.type ?? '';
  } catch {
    // not JSON: keep the status line
  }
  return new UpstreamFailure('status', message, res.statusCode, code, retryAfterSeconds(res.headers));
}

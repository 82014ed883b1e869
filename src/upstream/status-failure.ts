import type { Dispatcher } from 'undici';
import type { CollectedAnswer } from './client.js';
import { UpstreamFailure } from './failure.js';
import { readText } from './json.js';

/** A provider's error answer: a response whose body is still to be read, or one read whole already. */
export type ErrorAnswer = Dispatcher.ResponseData | CollectedAnswer;

/**
 * Turns a provider's non-2xx answer into an UpstreamFailure. `pick` reads the provider's error body
 * (already parsed; undefined when it was not JSON) for its message and code.
 */
export async function statusFailure(
  res: ErrorAnswer,
  pick: (body: any) => { message?: unknown; code?: unknown },
): Promise<UpstreamFailure> {
  const text = 'body' in res ? await readText(res).catch(() => '') : res.text;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const { message, code } = body && typeof body === 'object' ? pick(body) : {};
  return new UpstreamFailure(
    'status',
    typeof message === 'string' && message ? message : `HTTP ${res.statusCode}`,
    res.statusCode,
    typeof code === 'string' ? code : '',
    retryAfterSeconds(res.headers),
  );
}

export function retryAfterSeconds(headers: ErrorAnswer['headers']): number {
  const v = headers['retry-after'];
  const s = Number(Array.isArray(v) ? v[0] : v);
  return Number.isFinite(s) && s > 0 ? Math.ceil(s) : 0;
}

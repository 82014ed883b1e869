import type { Dispatcher } from 'undici';
import { UpstreamFailure, toUpstreamFailure } from './failure.js';

/** Reads a whole response body as text, mapping a broken or timed-out body to UpstreamFailure. */
export async function readText(res: Dispatcher.ResponseData, signal?: AbortSignal): Promise<string> {
  try {
    return await res.body.text();
  } catch (err) {
    throw toUpstreamFailure(err, signal);
  }
}

/** Reads a JSON body; anything unparsable is a `malformed` failure. */
export async function readJsonBody(res: Dispatcher.ResponseData, signal?: AbortSignal): Promise<unknown> {
  return parseUpstreamJson(await readText(res, signal), res.statusCode);
}

/** Parses an upstream answer's text; anything unparsable is a `malformed` failure (retryable). */
export function parseUpstreamJson(text: string, status: number): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new UpstreamFailure('malformed', 'the upstream answered with malformed JSON', status);
  }
}

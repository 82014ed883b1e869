import { UpstreamFailure } from '../upstream/failure.js';
import type { SseEvent } from './sse.js';

// What every chat stream translator (upstream events → client frames) offers, whatever the pair
// of formats.

/**
 * The chat wire formats: OpenAI Chat Completions, Anthropic Messages, OpenAI Responses, Google
 * Gemini generateContent.
 */
export type ChatFormat = 'openai' | 'anthropic' | 'responses' | 'gemini';

/** Tokens of one request; null while the upstream has not said. */
export interface ReportedUsage {
  /** Every input token, those read from or written to the provider's prompt cache included. */
  input: number | null;
  output: number | null;
  /** Of the input, the tokens read from the provider's prompt cache (absent: none reported). */
  cachedInput?: number | null;
  /** Of the input, the tokens written to the provider's prompt cache (Anthropic's cache_creation_input_tokens). */
  cacheWrite?: number | null;
}

export interface StreamTranslator {
  /**
   * Client frames for one upstream event ('' when the client gets nothing for it). Throws an
   * UpstreamFailure when the upstream reports an error inside the stream.
   */
  push(ev: SseEvent): string;
  /**
   * Called when the upstream body ended: the frames that close the client's stream, or null when
   * the upstream stopped before its answer was complete (a cut stream).
   */
  end(): string | null;
  /** The upstream sent its own end marker ([DONE] / message_stop). */
  readonly complete: boolean;
  /** Usage as the upstream reported it so far. */
  readonly usage: ReportedUsage;
  /** A rough count of output tokens sent to the client so far, to bill a stream cut short. */
  readonly deliveredTokens: number;
  /** The whole answer as a non-streamed body of the client's format, once the stream ended (if known). */
  final?(): unknown;
}

/** Rough tokens of a text: about four bytes per token (the usual rule of thumb for English). */
export function approxTokens(chars: number): number {
  return chars <= 0 ? 0 : Math.ceil(chars / 4);
}

const ANTHROPIC_ERROR_STATUS: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  overloaded_error: 529,
};

/** An Anthropic `event: error` (or an OpenAI error chunk) as an upstream failure. */
export function inStreamFailure(type: string, message: string): UpstreamFailure {
  const status = ANTHROPIC_ERROR_STATUS[type] ?? 500;
  return new UpstreamFailure('status', message || 'the upstream reported an error in the stream', status, type);
}

import { UpstreamFailure } from '../../upstream/failure.js';
import { parseUpstreamJson } from '../../upstream/json.js';
import { inStreamFailure, type ReportedUsage, type StreamTranslator } from '../chat-stream.js';
import type { ParsedChat } from '../hub/codec.js';
import { DONE_FRAME, dataFrame, type SseEvent } from '../sse.js';
import type { OpenAIChatCompletion, OpenAIChatRequest } from './types.js';

// Chat Completions on both sides: the request is forwarded after one parse and one stringify, the
// answer byte for byte; only the usage is read.

/**
 * Request transform: the upstream model name, and for a stream the usage chunk asked for
 * (stream_options.include_usage), so what was delivered can be billed. One shallow copy, one
 * stringify.
 */
export function openaiChatRequest(body: OpenAIChatRequest, upstreamModel: string, stream: boolean): string {
  const out: OpenAIChatRequest = { ...body, model: upstreamModel };
  if (stream) {
    out.stream = true;
    out.stream_options = { ...(body.stream_options ?? {}), include_usage: true };
  } else {
    // OpenAI rejects stream_options without stream.
    delete out.stream_options;
  }
  return JSON.stringify(out);
}

/** Response transform: checks the answer is a chat completion and reads its usage. */
export function openaiChatResponse(text: string): ParsedChat<OpenAIChatCompletion> {
  const body = parseUpstreamJson(text, 200) as OpenAIChatCompletion;
  if (!body || typeof body !== 'object' || !Array.isArray(body.choices)) {
    throw new UpstreamFailure('malformed', 'the upstream answer is not a chat completion', 200);
  }
  const u = body.usage;
  return { body, usage: { input: u?.prompt_tokens ?? null, output: u?.completion_tokens ?? null, cachedInput: u?.prompt_tokens_details?.cached_tokens ?? null } };
}

/** Where `"usage":` is followed by an object (not null) in compact JSON text; -1 when not. */
function usageObjectAt(data: string): number {
  const at = data.indexOf('"usage":');
  if (at < 0) return -1;
  let i = at + 8;
  while (data.charCodeAt(i) === 32) i++;
  return data.charCodeAt(i) === 123 /* { */ ? at : -1;
}

/**
 * Stream transform for an OpenAI-format client of an OpenAI-format channel: chunks pass through
 * byte for byte (no re-serialization); only chunks that carry usage or an error are parsed. The
 * usage-only chunk the gateway asked for is dropped unless the client asked for it too.
 */
export class OpenAIPassthroughStream implements StreamTranslator {
  complete = false;
  readonly usage: ReportedUsage = { input: null, output: null };
  private chunks = 0;
  private finished = false;

  constructor(private readonly includeUsage: boolean) {}

  /** OpenAI streams about one token per chunk. */
  get deliveredTokens(): number {
    return this.chunks;
  }

  push(ev: SseEvent): string {
    const data = ev.data;
    if (data === '[DONE]') {
      this.complete = true;
      return DONE_FRAME;
    }
    // In compact JSON these keys appear unescaped only as keys, never inside a string value.
    if (data.includes('"error"')) this.checkError(data);
    if (usageObjectAt(data) >= 0) {
      let chunk: { choices?: unknown[]; usage?: { prompt_tokens?: number; completion_tokens?: number; prompt_tokens_details?: { cached_tokens?: number } | null } };
      try {
        chunk = JSON.parse(data);
      } catch {
        throw new UpstreamFailure('malformed', 'the upstream sent a stream chunk that is not JSON');
      }
      this.usage.input = chunk.usage?.prompt_tokens ?? null;
      this.usage.output = chunk.usage?.completion_tokens ?? null;
      // Part of prompt_tokens: the prompt prefix read from OpenAI's cache.
      this.usage.cachedInput = chunk.usage?.prompt_tokens_details?.cached_tokens ?? null;
      if (!chunk.choices?.length) return this.includeUsage ? dataFrame(data) : '';
    }
    if (!this.finished && data.includes('"finish_reason":"')) this.finished = true;
    this.chunks++;
    return dataFrame(data);
  }

  end(): string | null {
    if (this.complete) return '';
    // Lenient servers that stop after the finish reason without [DONE] still gave a whole answer.
    if (this.finished) {
      this.complete = true;
      return DONE_FRAME;
    }
    return null;
  }

  private checkError(data: string): void {
    let chunk: { error?: { type?: string; message?: string } };
    try {
      chunk = JSON.parse(data);
    } catch {
      throw new UpstreamFailure('malformed', 'the upstream sent a stream chunk that is not JSON');
    }
    if (chunk.error) throw inStreamFailure(chunk.error.type ?? 'api_error', chunk.error.message ?? '');
  }
}

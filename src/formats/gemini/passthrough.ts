import { UpstreamFailure } from '../../upstream/failure.js';
import { approxTokens, type ReportedUsage, type StreamTranslator } from '../chat-stream.js';
import type { ParsedChat } from '../hub/codec.js';
import { dataFrame, type SseEvent } from '../sse.js';
import { decodeGeminiResponse } from './response.js';
import { geminiStreamFailure } from './stream.js';

// Gemini on both sides: the body goes on as the client sent it (the model is in the URL), the
// answer byte for byte; only the usage is read.

export function geminiPassthroughRequest(body: Record<string, unknown>): string {
  const { model: _model, stream: _stream, ...rest } = body;
  return JSON.stringify(rest);
}

export function geminiPassthroughResponse(text: string): ParsedChat {
  const r = decodeGeminiResponse(text);
  return { body: r, usage: { input: r.usage?.input ?? null, output: r.usage?.output ?? null, cachedInput: r.usage?.cachedInput ?? null } };
}

/**
 * Chunks pass as they came. Each chunk is parsed for its usage (Gemini repeats the running totals)
 * and finish reason; Gemini has no end marker, so a stream is whole once a finish reason came.
 */
export class GeminiPassthroughStream implements StreamTranslator {
  complete = false;
  readonly usage: ReportedUsage = { input: null, output: null };
  private chars = 0;
  private finished = false;

  get deliveredTokens(): number {
    return approxTokens(this.chars);
  }

  push(ev: SseEvent): string {
    let r: Record<string, any>;
    try {
      r = JSON.parse(ev.data);
    } catch {
      throw new UpstreamFailure('malformed', 'the upstream sent a stream chunk that is not JSON');
    }
    if (r.error) throw geminiStreamFailure(r.error);
    const u = r.usageMetadata;
    if (u) {
      if (u.promptTokenCount != null) this.usage.input = Number(u.promptTokenCount);
      // Part of promptTokenCount: the tokens of the cached content the request named.
      if (u.cachedContentTokenCount != null) this.usage.cachedInput = Number(u.cachedContentTokenCount);
      if (u.candidatesTokenCount != null || u.thoughtsTokenCount != null) this.usage.output = Number(u.candidatesTokenCount ?? 0) + Number(u.thoughtsTokenCount ?? 0);
    }
    if (r.candidates?.[0]?.finishReason) this.finished = true;
    this.chars += Math.max(4, ev.data.length - 120);
    return dataFrame(ev.data);
  }

  end(): string | null {
    if (this.complete) return '';
    if (!this.finished) return null;
    this.complete = true;
    return '';
  }
}

import { UpstreamFailure } from '../../upstream/failure.js';
import { parseUpstreamJson } from '../../upstream/json.js';
import { approxTokens, inStreamFailure, type ReportedUsage, type StreamTranslator } from '../chat-stream.js';
import type { ParsedChat } from '../hub/codec.js';
import { dataFrame, eventFrame, type SseEvent } from '../sse.js';
import type { AnthropicMessage, AnthropicRequest, AnthropicUsage } from './types.js';
import { anthropicCacheTokens, anthropicInputTokens } from './response.js';

// Anthropic Messages on both sides: the request is forwarded after one parse and one stringify,
// events as they came; usage comes in the answer, and in a stream in message_start (input) and
// message_delta (output, cumulative).

/** Request transform: the upstream model name; one shallow copy, one stringify. */
export function anthropicChatRequest(body: AnthropicRequest, upstreamModel: string, stream: boolean): string {
  const out: AnthropicRequest = { ...body, model: upstreamModel };
  if (stream) out.stream = true;
  else delete out.stream;
  return JSON.stringify(out);
}

/** Response transform: checks the answer is a message and reads its usage. */
export function anthropicChatResponse(text: string): ParsedChat<AnthropicMessage> {
  const body = parseUpstreamJson(text, 200) as AnthropicMessage;
  if (!body || typeof body !== 'object' || body.type !== 'message' || !Array.isArray(body.content)) {
    throw new UpstreamFailure('malformed', 'the upstream answer is not a message', 200);
  }
  return { body, usage: { input: anthropicInputTokens(body.usage), output: body.usage?.output_tokens ?? null, ...anthropicCacheTokens(body.usage) } };
}

/**
 * Stream transform for an Anthropic-format client of an Anthropic-format channel: events pass
 * through as they came (the data is not re-serialized); message_start and message_delta are read
 * for usage, `error` ends the stream as a failure.
 */
export class AnthropicPassthroughStream implements StreamTranslator {
  complete = false;
  readonly usage: ReportedUsage = { input: null, output: null };
  private chars = 0;
  private stopped = false;

  get deliveredTokens(): number {
    return approxTokens(this.chars);
  }

  push(ev: SseEvent): string {
    switch (ev.event) {
      case 'content_block_delta':
        // The delta's payload is the data minus an envelope of about 70 bytes.
        this.chars += Math.max(4, ev.data.length - 70);
        break;
      case 'message_start': {
        const u = this.parse(ev.data).message?.usage;
        this.usage.input = anthropicInputTokens(u);
        this.usage.output = u?.output_tokens ?? null;
        Object.assign(this.usage, anthropicCacheTokens(u));
        break;
      }
      case 'message_delta': {
        const e = this.parse(ev.data);
        if (e.usage?.output_tokens != null) this.usage.output = e.usage.output_tokens;
        const input = anthropicInputTokens(e.usage);
        if (input !== null) {
          this.usage.input = input;
          Object.assign(this.usage, anthropicCacheTokens(e.usage));
        }
        this.stopped = true;
        break;
      }
      case 'message_stop':
        this.complete = true;
        break;
      case 'error': {
        const e = this.parse(ev.data);
        throw inStreamFailure(e.error?.type ?? 'api_error', e.error?.message ?? '');
      }
      default:
        break;
    }
    return ev.event ? eventFrame(ev.event, ev.data) : dataFrame(ev.data);
  }

  end(): string | null {
    if (this.complete) return '';
    // message_delta said how it stopped; only message_stop is missing.
    if (this.stopped) {
      this.complete = true;
      return eventFrame('message_stop', '{"type":"message_stop"}');
    }
    return null;
  }

  private parse(data: string): { message?: { usage?: AnthropicUsage }; usage?: Partial<AnthropicUsage>; error?: { type?: string; message?: string } } {
    try {
      return JSON.parse(data);
    } catch {
      throw new UpstreamFailure('malformed', 'the upstream sent a stream event that is not JSON');
    }
  }
}

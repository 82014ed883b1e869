import { UpstreamFailure } from '../../upstream/failure.js';
import type { AnthropicStreamEvent, AnthropicUsage } from '../anthropic-types.js';
import { approxTokens, inStreamFailure, type ReportedUsage, type StreamTranslator } from '../chat-stream.js';
import type { OpenAIChunkChoice, OpenAIFinishReason } from '../openai-types.js';
import { DONE_FRAME, dataFrame, type SseEvent } from '../sse.js';
import { openaiFinishReason, openaiUsage } from './response.js';

/**
 * Anthropic Messages stream events → OpenAI `chat.completion.chunk`s. message_start opens with a
 * role chunk; text deltas become content deltas; each tool_use block becomes one tool call (id and
 * name first, then its input_json_delta pieces as arguments); message_delta carries the finish
 * reason; message_stop ends with the usage chunk (only when the client asked for it) and [DONE].
 */
export class AnthropicToOpenAIStream implements StreamTranslator {
  complete = false;
  readonly usage: ReportedUsage = { input: null, output: null };
  private chars = 0;
  private id = '';
  private model: string;
  private readonly created = Math.floor(Date.now() / 1000);
  /** Anthropic content block index → OpenAI tool-call index. */
  private readonly toolCalls = new Map<number, number>();
  private finish: OpenAIFinishReason | null = null;
  private rawUsage: Partial<AnthropicUsage> = {};

  constructor(
    requestedModel: string,
    /** The client sent stream_options.include_usage: it gets the usage chunk. */
    private readonly includeUsage: boolean,
  ) {
    this.model = requestedModel;
  }

  get deliveredTokens(): number {
    return approxTokens(this.chars);
  }

  push(ev: SseEvent): string {
    if (ev.event === 'ping') return '';
    let e: AnthropicStreamEvent;
    try {
      e = JSON.parse(ev.data) as AnthropicStreamEvent;
    } catch {
      throw new UpstreamFailure('malformed', 'the upstream sent a stream event that is not JSON');
    }
    switch (e.type) {
      case 'message_start': {
        const m = e.message;
        this.id = m?.id ?? this.id;
        if (m?.model) this.model = m.model;
        this.noteUsage(m?.usage);
        return this.chunk({ role: 'assistant', content: '' });
      }
      case 'content_block_start': {
        const b = e.content_block as { type: string; id?: string; name?: string; text?: string };
        if (b.type === 'tool_use') {
          const index = this.toolCalls.size;
          this.toolCalls.set(e.index, index);
          return this.chunk({ tool_calls: [{ index, id: b.id ?? '', type: 'function', function: { name: b.name ?? '', arguments: '' } }] });
        }
        if (b.type === 'text' && b.text) return this.text(b.text);
        return '';
      }
      case 'content_block_delta': {
        const d = e.delta as { type: string; text?: string; partial_json?: string };
        if (d.type === 'text_delta' && d.text) return this.text(d.text);
        if (d.type === 'input_json_delta' && d.partial_json) {
          const index = this.toolCalls.get(e.index);
          if (index === undefined) return '';
          this.chars += d.partial_json.length;
          return this.chunk({ tool_calls: [{ index, function: { arguments: d.partial_json } }] });
        }
        return ''; // thinking and signature deltas have no Chat Completions counterpart
      }
      case 'message_delta':
        this.noteUsage(e.usage);
        this.finish = openaiFinishReason(e.delta?.stop_reason);
        return this.chunk({}, this.finish);
      case 'message_stop':
        return this.close();
      case 'error':
        throw inStreamFailure(e.error?.type ?? 'api_error', e.error?.message ?? '');
      default:
        return ''; // content_block_stop, and event types added later
    }
  }

  end(): string | null {
    if (this.complete) return '';
    return this.finish ? this.close() : null;
  }

  private close(): string {
    this.complete = true;
    let out = '';
    if (this.includeUsage) {
      const usage = openaiUsage({ ...this.rawUsage, output_tokens: this.usage.output ?? this.deliveredTokens });
      out += dataFrame(JSON.stringify({ id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.model, choices: [], usage }));
    }
    return out + DONE_FRAME;
  }

  private text(text: string): string {
    this.chars += text.length;
    return this.chunk({ content: text });
  }

  private noteUsage(u: Partial<AnthropicUsage> | undefined): void {
    if (!u) return;
    // Totals so far; message_delta repeats or completes what message_start said.
    this.rawUsage = { ...this.rawUsage, ...definedOnly(u) };
    if (u.input_tokens != null) {
      this.usage.input = (this.rawUsage.input_tokens ?? 0) + (this.rawUsage.cache_read_input_tokens ?? 0) + (this.rawUsage.cache_creation_input_tokens ?? 0);
    }
    if (u.output_tokens != null) this.usage.output = u.output_tokens;
  }

  private chunk(delta: OpenAIChunkChoice['delta'], finish: OpenAIFinishReason | null = null): string {
    const body: Record<string, unknown> = {
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.created,
      model: this.model,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    };
    // With include_usage every chunk but the last carries "usage": null (OpenAI's shape).
    if (this.includeUsage) body.usage = null;
    return dataFrame(JSON.stringify(body));
  }
}

function definedOnly(u: Partial<AnthropicUsage>): Partial<AnthropicUsage> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(u)) if (v != null) out[k] = v;
  return out as Partial<AnthropicUsage>;
}

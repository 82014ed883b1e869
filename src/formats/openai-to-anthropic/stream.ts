import { UpstreamFailure } from '../../upstream/failure.js';
import type { AnthropicStopReason } from '../anthropic-types.js';
import { approxTokens, inStreamFailure, type ReportedUsage, type StreamTranslator } from '../chat-stream.js';
import type { OpenAIChatChunk } from '../openai-types.js';
import { eventFrame, type SseEvent } from '../sse.js';
import { anthropicMessageId, anthropicStopReason } from './response.js';

/**
 * OpenAI `chat.completion.chunk`s → Anthropic Messages stream events. The first chunk opens the
 * message (message_start, then a ping as Anthropic sends); text and each tool call become content
 * blocks with their start/delta/stop events; the finish reason and the usage chunk (the upstream
 * is always asked for it) are held until [DONE], which becomes message_delta + message_stop.
 */
export class OpenAIToAnthropicStream implements StreamTranslator {
  complete = false;
  readonly usage: ReportedUsage = { input: null, output: null };
  private chars = 0;
  private started = false;
  private blocks = 0;
  /** The content block open now: its index and what it holds. */
  private open: { index: number; kind: 'text' | 'tool'; toolIndex: number } | null = null;
  /** OpenAI tool-call index → Anthropic content block index. */
  private readonly toolBlocks = new Map<number, number>();
  private stopReason: AnthropicStopReason | null = null;

  constructor(private readonly requestedModel: string) {}

  get deliveredTokens(): number {
    return approxTokens(this.chars);
  }

  push(ev: SseEvent): string {
    const data = ev.data;
    if (data === '[DONE]') return this.finish();
    let chunk: OpenAIChatChunk;
    try {
      chunk = JSON.parse(data) as OpenAIChatChunk;
    } catch {
      throw new UpstreamFailure('malformed', 'the upstream sent a stream chunk that is not JSON');
    }
    if (chunk.error) {
      const e = chunk.error as { type?: string; message?: string };
      throw inStreamFailure(e.type ?? 'api_error', e.message ?? '');
    }
    let out = this.started ? '' : this.start(chunk.id, chunk.model);
    if (chunk.usage) {
      this.usage.input = chunk.usage.prompt_tokens ?? null;
      this.usage.output = chunk.usage.completion_tokens ?? null;
    }
    const choice = chunk.choices?.[0];
    if (!choice) return out;
    const d = choice.delta ?? {};
    const text = (d.content ?? '') + (d.refusal ?? '');
    if (text) {
      if (this.open?.kind !== 'text') out += this.closeOpen() + this.startBlock('text', -1, { type: 'text', text: '' });
      this.chars += text.length;
      out += this.event('content_block_delta', { type: 'content_block_delta', index: this.open!.index, delta: { type: 'text_delta', text } });
    }
    for (const tc of d.tool_calls ?? []) {
      let index = this.toolBlocks.get(tc.index);
      if (index === undefined) {
        out += this.closeOpen();
        index = this.blocks;
        this.toolBlocks.set(tc.index, index);
        const id = tc.id || `toolu_${index}`;
        out += this.startBlock('tool', tc.index, { type: 'tool_use', id, name: tc.function?.name ?? '', input: {} });
      }
      const args = tc.function?.arguments;
      if (args) {
        this.chars += args.length;
        out += this.event('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: args } });
      }
    }
    if (choice.finish_reason) {
      this.stopReason = anthropicStopReason(choice.finish_reason);
      out += this.closeOpen();
    }
    return out;
  }

  end(): string | null {
    if (this.complete) return '';
    // Some OpenAI-compatible servers end after the finish reason without [DONE]: still whole.
    return this.stopReason ? this.finish() : null;
  }

  private start(id: string | undefined, model: string | undefined): string {
    this.started = true;
    const message = {
      id: anthropicMessageId(id),
      type: 'message',
      role: 'assistant',
      model: model || this.requestedModel,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      // OpenAI reports input tokens only at the end; message_delta carries them then.
      usage: { input_tokens: 0, output_tokens: 0 },
    };
    return this.event('message_start', { type: 'message_start', message }) + eventFrame('ping', '{"type":"ping"}');
  }

  private startBlock(kind: 'text' | 'tool', toolIndex: number, block: Record<string, unknown>): string {
    const index = this.blocks++;
    this.open = { index, kind, toolIndex };
    return this.event('content_block_start', { type: 'content_block_start', index, content_block: block });
  }

  private closeOpen(): string {
    if (!this.open) return '';
    const index = this.open.index;
    this.open = null;
    return this.event('content_block_stop', { type: 'content_block_stop', index });
  }

  private finish(): string {
    this.complete = true;
    let out = this.started ? '' : this.start(undefined, undefined);
    out += this.closeOpen();
    const usage: Record<string, number> = { output_tokens: this.usage.output ?? this.deliveredTokens };
    if (this.usage.input !== null) usage.input_tokens = this.usage.input;
    out += this.event('message_delta', { type: 'message_delta', delta: { stop_reason: this.stopReason ?? 'end_turn', stop_sequence: null }, usage });
    return out + this.event('message_stop', { type: 'message_stop' });
  }

  private event(name: string, body: unknown): string {
    return eventFrame(name, JSON.stringify(body));
  }
}

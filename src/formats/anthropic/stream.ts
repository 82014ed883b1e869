import { errorBody, type GatewayError } from '../../http/errors.js';
import { UpstreamFailure } from '../../upstream/failure.js';
import { inStreamFailure } from '../chat-stream.js';
import type { ClientOptions, StreamDecoder, StreamEncoder } from '../hub/codec.js';
import type { HubEvent, HubRequest, HubStop, HubUsage } from '../hub/types.js';
import { eventFrame, type SseEvent } from '../sse.js';
import { JSON_TOOL } from './request.js';
import { anthropicMessageId, anthropicStop, anthropicUsageOf, emulatesJson, hubUsageOfAnthropic, stopReasonOf } from './response.js';
import type { AnthropicStreamEvent } from './types.js';

/** Anthropic Messages stream events → hub events. */
export class AnthropicStreamDecoder implements StreamDecoder {
  /** Content block index → what the block is. */
  private readonly blocks = new Map<number, 'tool' | 'json' | 'other'>();
  private readonly json: boolean;

  constructor(req: HubRequest) {
    this.json = emulatesJson(req);
  }

  push(ev: SseEvent): HubEvent[] {
    if (ev.event === 'ping') return [];
    let e: AnthropicStreamEvent;
    try {
      e = JSON.parse(ev.data) as AnthropicStreamEvent;
    } catch {
      throw new UpstreamFailure('malformed', 'the upstream sent a stream event that is not JSON');
    }
    switch (e.type) {
      case 'message_start':
        return [
          { type: 'start', id: e.message?.id, model: e.message?.model },
          { type: 'usage', usage: hubUsageOfAnthropic(e.message?.usage) },
        ];
      case 'content_block_start': {
        const b = e.content_block as { type: string; id?: string; name?: string; text?: string; thinking?: string };
        if (b.type === 'tool_use') {
          if (this.json && b.name === JSON_TOOL) {
            this.blocks.set(e.index, 'json');
            return [];
          }
          this.blocks.set(e.index, 'tool');
          return [{ type: 'tool_call', index: e.index, id: b.id ?? '', name: b.name ?? '' }];
        }
        this.blocks.set(e.index, 'other');
        if (b.type === 'text' && b.text) return [{ type: 'text', text: b.text }];
        if (b.type === 'thinking' && b.thinking) return [{ type: 'reasoning', text: b.thinking }];
        return [];
      }
      case 'content_block_delta': {
        const d = e.delta as { type: string; text?: string; partial_json?: string; thinking?: string; signature?: string };
        if (d.type === 'text_delta' && d.text) return [{ type: 'text', text: d.text }];
        if (d.type === 'thinking_delta' && d.thinking) return [{ type: 'reasoning', text: d.thinking }];
        if (d.type === 'signature_delta' && d.signature) return [{ type: 'reasoning', text: '', signature: d.signature }];
        if (d.type === 'input_json_delta' && d.partial_json) {
          const kind = this.blocks.get(e.index);
          if (kind === 'json') return [{ type: 'text', text: d.partial_json }];
          if (kind === 'tool') return [{ type: 'tool_call', index: e.index, args: d.partial_json }];
        }
        return [];
      }
      case 'message_delta': {
        let stop: HubStop = anthropicStop(e.delta?.stop_reason);
        if (stop === 'tool' && this.json && ![...this.blocks.values()].includes('tool')) stop = 'end';
        return [
          { type: 'usage', usage: hubUsageOfAnthropic(e.usage) },
          { type: 'finish', stop, stopSequence: e.delta?.stop_sequence ?? null },
        ];
      }
      case 'message_stop':
        return [{ type: 'done' }];
      case 'error':
        throw inStreamFailure(e.error?.type ?? 'api_error', e.error?.message ?? '');
      default:
        return []; // content_block_stop, and event types added later
    }
  }
}

/** Hub events → Anthropic Messages stream events for an Anthropic client. */
export class AnthropicStreamEncoder implements StreamEncoder {
  private started = false;
  private id = '';
  private model: string;
  private blocks = 0;
  /** The content block open now and what it holds. */
  private open: { index: number; kind: 'text' | 'thinking' | 'tool'; call?: number } | null = null;
  private readonly calls = new Set<number>();
  private stop: HubStop = 'end';
  private stopSequence: string | null = null;

  constructor(opts: ClientOptions) {
    this.model = opts.model;
  }

  push(e: HubEvent): string {
    if (e.type === 'start') {
      if (e.id) this.id = e.id;
      if (e.model) this.model = e.model;
      return this.begin();
    }
    let out = this.begin();
    switch (e.type) {
      case 'text':
        if (!e.text) return out;
        if (this.open?.kind !== 'text') out += this.openBlock('text', { type: 'text', text: '' });
        return out + this.event('content_block_delta', { index: this.open!.index, delta: { type: 'text_delta', text: e.text } });
      case 'reasoning':
        if (this.open?.kind !== 'thinking') out += this.openBlock('thinking', { type: 'thinking', thinking: '', signature: '' });
        if (e.text) out += this.event('content_block_delta', { index: this.open!.index, delta: { type: 'thinking_delta', thinking: e.text } });
        if (e.signature) out += this.event('content_block_delta', { index: this.open!.index, delta: { type: 'signature_delta', signature: e.signature } });
        return out;
      case 'tool_call':
        if (!this.calls.has(e.index)) {
          this.calls.add(e.index);
          out += this.openBlock('tool', { type: 'tool_use', id: e.id || `toolu_${this.blocks}`, name: e.name ?? '', input: {} }, e.index);
        }
        // Pieces of a call arrive after its start; a call interleaved with another is not (OpenAI streams them in turn).
        if (e.args && this.open?.kind === 'tool' && this.open.call === e.index) {
          out += this.event('content_block_delta', { index: this.open.index, delta: { type: 'input_json_delta', partial_json: e.args } });
        }
        return out;
      case 'finish':
        this.stop = e.stop === 'end' && this.calls.size ? 'tool' : e.stop;
        this.stopSequence = e.stopSequence ?? null;
        return out;
      default:
        return out;
    }
  }

  end(usage: HubUsage): string {
    let out = this.begin() + this.closeOpen();
    const u = anthropicUsageOf(usage);
    out += this.event('message_delta', {
      delta: { stop_reason: stopReasonOf(this.stop), stop_sequence: this.stopSequence },
      usage: { input_tokens: u.input_tokens, output_tokens: u.output_tokens, ...(u.cache_read_input_tokens ? { cache_read_input_tokens: u.cache_read_input_tokens } : {}), ...(u.cache_creation_input_tokens ? { cache_creation_input_tokens: u.cache_creation_input_tokens } : {}) },
    });
    return out + this.event('message_stop', {});
  }

  error(err: GatewayError): string {
    return eventFrame('error', JSON.stringify(errorBody('anthropic', err)));
  }

  private begin(): string {
    if (this.started) return '';
    this.started = true;
    const message = { id: anthropicMessageId(this.id), type: 'message', role: 'assistant', model: this.model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 0, output_tokens: 0 } };
    return this.event('message_start', { message }) + this.event('ping', {});
  }

  private openBlock(kind: 'text' | 'thinking' | 'tool', block: Record<string, unknown>, call?: number): string {
    const out = this.closeOpen();
    this.open = { index: this.blocks++, kind, call };
    return out + this.event('content_block_start', { index: this.open.index, content_block: block });
  }

  private closeOpen(): string {
    if (!this.open) return '';
    const out = this.event('content_block_stop', { index: this.open.index });
    this.open = null;
    return out;
  }

  private event(name: string, body: Record<string, unknown>): string {
    return eventFrame(name, JSON.stringify({ type: name, ...body }));
  }
}

import type { GatewayError } from '../../http/errors.js';
import { errorBody } from '../../http/errors.js';
import { UpstreamFailure } from '../../upstream/failure.js';
import { inStreamFailure } from '../chat-stream.js';
import type { ClientOptions, StreamDecoder, StreamEncoder } from '../hub/codec.js';
import type { HubEvent, HubUsage } from '../hub/types.js';
import { DONE_FRAME, dataFrame, type SseEvent } from '../sse.js';
import { chatCompletionId, finishReasonOf, hubUsageOfOpenAI, openaiStop, openaiUsageOf } from './response.js';
import type { OpenAIChatChunk, OpenAIChunkChoice } from './types.js';

/** `chat.completion.chunk`s of an OpenAI-format upstream → hub events. */
export class OpenAIChatStreamDecoder implements StreamDecoder {
  private started = false;

  push(ev: SseEvent): HubEvent[] {
    if (ev.data === '[DONE]') return [{ type: 'done' }];
    let chunk: OpenAIChatChunk;
    try {
      chunk = JSON.parse(ev.data) as OpenAIChatChunk;
    } catch {
      throw new UpstreamFailure('malformed', 'the upstream sent a stream chunk that is not JSON');
    }
    if (chunk.error) {
      const e = chunk.error as { type?: string; message?: string };
      throw inStreamFailure(e.type ?? 'api_error', e.message ?? '');
    }
    const out: HubEvent[] = [];
    if (!this.started) {
      this.started = true;
      out.push({ type: 'start', id: chunk.id, model: chunk.model });
    }
    const choice = chunk.choices?.[0];
    if (choice) {
      const d = (choice.delta ?? {}) as OpenAIChunkChoice['delta'] & { reasoning_content?: string | null };
      if (d.reasoning_content) out.push({ type: 'reasoning', text: d.reasoning_content });
      const text = (d.content ?? '') + (d.refusal ?? '');
      if (text) out.push({ type: 'text', text });
      for (const tc of d.tool_calls ?? []) {
        out.push({ type: 'tool_call', index: tc.index, ...(tc.id ? { id: tc.id } : {}), ...(tc.function?.name ? { name: tc.function.name } : {}), ...(tc.function?.arguments ? { args: tc.function.arguments } : {}) });
      }
      if (choice.finish_reason) out.push({ type: 'finish', stop: openaiStop(choice.finish_reason) });
    }
    const usage = hubUsageOfOpenAI(chunk.usage);
    if (usage) out.push({ type: 'usage', usage });
    return out;
  }
}

/** Hub events → `chat.completion.chunk`s for an OpenAI Chat Completions client. */
export class OpenAIChatStreamEncoder implements StreamEncoder {
  private id = '';
  private model: string;
  private readonly created = Math.floor(Date.now() / 1000);
  private started = false;
  /** Upstream tool-call index → the client's (0, 1, … in order of appearance). */
  private readonly calls = new Map<number, number>();
  private sawToolCall = false;

  constructor(private readonly opts: ClientOptions) {
    this.model = opts.model;
  }

  push(e: HubEvent): string {
    if (e.type === 'start') {
      if (e.id) this.id = chatCompletionId(e.id);
      if (e.model) this.model = e.model;
      return this.open();
    }
    let out = this.open();
    switch (e.type) {
      case 'text':
        return out + (e.text ? this.chunk({ content: e.text }) : '');
      case 'reasoning':
        return out + (e.text ? this.chunk({ reasoning_content: e.text } as OpenAIChunkChoice['delta']) : '');
      case 'tool_call': {
        this.sawToolCall = true;
        let index = this.calls.get(e.index);
        if (index === undefined) {
          index = this.calls.size;
          this.calls.set(e.index, index);
          out += this.chunk({ tool_calls: [{ index, id: e.id ?? `call_${index}`, type: 'function', function: { name: e.name ?? '', arguments: e.args ?? '' } }] });
          return out;
        }
        return out + (e.args ? this.chunk({ tool_calls: [{ index, function: { arguments: e.args } }] }) : '');
      }
      case 'finish': {
        const stop = e.stop === 'end' && this.sawToolCall ? 'tool' : e.stop;
        return out + this.chunk({}, finishReasonOf(stop));
      }
      default:
        return out;
    }
  }

  end(usage: HubUsage): string {
    let out = this.open();
    if (this.opts.includeUsage) {
      out += dataFrame(JSON.stringify({ id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.model, choices: [], usage: openaiUsageOf(usage) }));
    }
    return out + DONE_FRAME;
  }

  error(err: GatewayError): string {
    return dataFrame(JSON.stringify(errorBody('openai', err)));
  }

  private open(): string {
    if (this.started) return '';
    this.started = true;
    if (!this.id) this.id = chatCompletionId('');
    return this.chunk({ role: 'assistant', content: '' });
  }

  private chunk(delta: OpenAIChunkChoice['delta'], finish: string | null = null): string {
    const body: Record<string, unknown> = { id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.model, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] };
    // With include_usage every chunk but the last carries "usage": null (OpenAI's shape).
    if (this.opts.includeUsage) body.usage = null;
    return dataFrame(JSON.stringify(body));
  }
}

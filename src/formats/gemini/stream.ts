import { errorBody, type GatewayError } from '../../http/errors.js';
import { UpstreamFailure } from '../../upstream/failure.js';
import type { ClientOptions, StreamDecoder, StreamEncoder } from '../hub/codec.js';
import type { HubEvent, HubStop, HubUsage } from '../hub/types.js';
import { argsObject, localId } from '../hub/util.js';
import { dataFrame, type SseEvent } from '../sse.js';
import { finishReasonOf, geminiStop, geminiUsageOf, hubUsageOfGemini, partsOfGemini } from './response.js';

type Json = Record<string, any>;

/** An error object inside a Gemini stream as an upstream failure. */
export function geminiStreamFailure(e: Json): UpstreamFailure {
  const code = Number(e.code) || 500;
  return new UpstreamFailure('status', e.message || 'the upstream reported an error in the stream', code, String(e.status ?? ''));
}

/** Gemini `?alt=sse` chunks (each a whole GenerateContentResponse) → hub events. */
export class GeminiStreamDecoder implements StreamDecoder {
  private started = false;
  private calls = 0;

  push(ev: SseEvent): HubEvent[] {
    let r: Json;
    try {
      r = JSON.parse(ev.data) as Json;
    } catch {
      throw new UpstreamFailure('malformed', 'the upstream sent a stream chunk that is not JSON');
    }
    if (r.error) throw geminiStreamFailure(r.error);
    const out: HubEvent[] = [];
    if (!this.started) {
      this.started = true;
      out.push({ type: 'start', id: r.responseId, model: r.modelVersion });
    }
    const c = r.candidates?.[0];
    for (const p of partsOfGemini(c?.content?.parts)) {
      if (p.type === 'text' || p.type === 'reasoning') out.push({ type: p.type, text: p.text });
      else if (p.type === 'tool_call') {
        const index = this.calls++;
        out.push({ type: 'tool_call', index, id: p.id, name: p.name }, { type: 'tool_call', index, args: p.arguments });
      }
    }
    const usage = hubUsageOfGemini(r.usageMetadata);
    if (usage) out.push({ type: 'usage', usage });
    if (c?.finishReason) out.push({ type: 'finish', stop: geminiStop(c.finishReason) });
    else if (!c && r.promptFeedback?.blockReason) out.push({ type: 'finish', stop: 'content_filter' });
    return out;
  }
}

/**
 * Hub events → Gemini `?alt=sse` chunks for a Gemini client. Gemini sends a function call whole,
 * in one part, so a call's argument pieces are collected and the call goes out when it is complete.
 */
export class GeminiStreamEncoder implements StreamEncoder {
  private model: string;
  private id = localId('');
  private readonly calls: { index: number; id: string; name: string; args: string }[] = [];
  private stop: HubStop = 'end';

  constructor(opts: ClientOptions) {
    this.model = opts.model;
  }

  push(e: HubEvent): string {
    switch (e.type) {
      case 'start':
        if (e.model) this.model = e.model;
        if (e.id) this.id = e.id;
        return '';
      case 'text':
        return e.text ? this.flushCalls() + this.chunk([{ text: e.text }]) : '';
      case 'reasoning':
        return e.text ? this.flushCalls() + this.chunk([{ text: e.text, thought: true }]) : '';
      case 'tool_call': {
        let call = this.calls.find((c) => c.index === e.index);
        if (!call) {
          call = { index: e.index, id: e.id || localId('call_'), name: e.name ?? '', args: '' };
          this.calls.push(call);
        }
        call.args += e.args ?? '';
        return '';
      }
      case 'finish':
        this.stop = e.stop;
        return '';
      default:
        return '';
    }
  }

  end(usage: HubUsage): string {
    const calls = this.takeCalls();
    const body: Json = {
      candidates: [{ content: { role: 'model', parts: calls.length ? calls : [{ text: '' }] }, finishReason: finishReasonOf(this.stop === 'tool' ? 'end' : this.stop), index: 0 }],
      usageMetadata: geminiUsageOf(usage),
      modelVersion: this.model,
      responseId: this.id,
    };
    return dataFrame(JSON.stringify(body));
  }

  error(err: GatewayError): string {
    return dataFrame(JSON.stringify(errorBody('gemini', err)));
  }

  private takeCalls(): Json[] {
    const parts = this.calls.map((c) => ({ functionCall: { id: c.id, name: c.name, args: argsObject(c.args) } }));
    this.calls.length = 0;
    return parts;
  }

  private flushCalls(): string {
    const calls = this.takeCalls();
    return calls.length ? this.chunk(calls) : '';
  }

  private chunk(parts: Json[]): string {
    return dataFrame(JSON.stringify({ candidates: [{ content: { role: 'model', parts }, index: 0 }], modelVersion: this.model, responseId: this.id }));
  }
}

import type { GatewayError } from '../../http/errors.js';
import { UpstreamFailure } from '../../upstream/failure.js';
import { inStreamFailure } from '../chat-stream.js';
import type { ClientOptions, StreamDecoder, StreamEncoder } from '../hub/codec.js';
import type { HubEvent, HubStop, HubUsage } from '../hub/types.js';
import { localId } from '../hub/util.js';
import { eventFrame, type SseEvent } from '../sse.js';
import { hubUsageOfResponses, responseObject, responsesStop, statusOfStop } from './response.js';

type Json = Record<string, any>;

/** Typed Responses stream events of an upstream → hub events. */
export class ResponsesStreamDecoder implements StreamDecoder {
  push(ev: SseEvent): HubEvent[] {
    let e: Json;
    try {
      e = JSON.parse(ev.data) as Json;
    } catch {
      throw new UpstreamFailure('malformed', 'the upstream sent a stream event that is not JSON');
    }
    switch (e.type ?? ev.event) {
      case 'response.created':
        return [{ type: 'start', id: e.response?.id, model: e.response?.model }];
      case 'response.output_item.added':
        if (e.item?.type === 'function_call') {
          const out: HubEvent[] = [{ type: 'tool_call', index: e.output_index, id: e.item.call_id, name: e.item.name }];
          if (e.item.arguments) out.push({ type: 'tool_call', index: e.output_index, args: e.item.arguments });
          return out;
        }
        return [];
      case 'response.output_text.delta':
      case 'response.refusal.delta':
        return e.delta ? [{ type: 'text', text: e.delta }] : [];
      case 'response.function_call_arguments.delta':
        return e.delta ? [{ type: 'tool_call', index: e.output_index, args: e.delta }] : [];
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_text.delta':
        return e.delta ? [{ type: 'reasoning', text: e.delta }] : [];
      case 'response.completed':
      case 'response.incomplete': {
        const usage = hubUsageOfResponses(e.response?.usage);
        const out: HubEvent[] = [];
        if (usage) out.push({ type: 'usage', usage });
        out.push({ type: 'finish', stop: responsesStop(e.response ?? {}) }, { type: 'done' });
        return out;
      }
      case 'response.failed':
        throw inStreamFailure('api_error', e.response?.error?.message ?? 'the upstream response failed');
      case 'error':
        throw inStreamFailure(String(e.code ?? 'api_error'), e.message ?? '');
      default:
        return [];
    }
  }
}

interface OpenItem {
  item: Json;
  index: number;
  /** The hub's tool-call index, for function calls. */
  call?: number;
}

/**
 * Hub events → the Responses API's typed events for a Responses client: response.created and
 * response.in_progress first; each output item added, its deltas, then its done events; finally
 * response.completed (or response.incomplete) with the whole response.
 */
export class ResponsesStreamEncoder implements StreamEncoder {
  private seq = 0;
  private started = false;
  private model: string;
  private readonly id: string;
  private readonly output: Json[] = [];
  private open: OpenItem | null = null;
  private readonly calls = new Map<number, OpenItem>();
  private stop: HubStop = 'end';
  private finalResponse: Json | null = null;

  constructor(private readonly opts: ClientOptions) {
    this.model = opts.model;
    this.id = opts.responseId ?? localId('resp_');
  }

  push(e: HubEvent): string {
    if (e.type === 'start') {
      if (e.model) this.model = e.model;
      return this.begin();
    }
    let out = this.begin();
    switch (e.type) {
      case 'text': {
        if (!e.text) return out;
        if (this.open?.item.type !== 'message') {
          out += this.openItem({ id: localId('msg_'), type: 'message', status: 'in_progress', role: 'assistant', content: [] });
          const part = { type: 'output_text', text: '', annotations: [], logprobs: [] };
          this.open!.item.content.push(part);
          out += this.event('response.content_part.added', { item_id: this.open!.item.id, output_index: this.open!.index, content_index: 0, part: { ...part } });
        }
        const o = this.open!;
        o.item.content[0].text += e.text;
        return out + this.event('response.output_text.delta', { item_id: o.item.id, output_index: o.index, content_index: 0, delta: e.text, logprobs: [] });
      }
      case 'reasoning': {
        if (!e.text) return out;
        if (this.open?.item.type !== 'reasoning') {
          out += this.openItem({ id: localId('rs_'), type: 'reasoning', summary: [] });
          this.open!.item.summary.push({ type: 'summary_text', text: '' });
          out += this.event('response.reasoning_summary_part.added', { item_id: this.open!.item.id, output_index: this.open!.index, summary_index: 0, part: { type: 'summary_text', text: '' } });
        }
        const o = this.open!;
        o.item.summary[0].text += e.text;
        return out + this.event('response.reasoning_summary_text.delta', { item_id: o.item.id, output_index: o.index, summary_index: 0, delta: e.text });
      }
      case 'tool_call': {
        let o = this.calls.get(e.index);
        if (!o) {
          out += this.openItem({ id: localId('fc_'), type: 'function_call', status: 'in_progress', arguments: '', call_id: e.id || localId('call_'), name: e.name ?? '' });
          o = this.open!;
          o.call = e.index;
          this.calls.set(e.index, o);
        }
        if (!e.args) return out;
        o.item.arguments += e.args;
        return out + this.event('response.function_call_arguments.delta', { item_id: o.item.id, output_index: o.index, delta: e.args });
      }
      case 'finish':
        this.stop = e.stop === 'end' && this.calls.size ? 'tool' : e.stop;
        return out;
      default:
        return out;
    }
  }

  end(usage: HubUsage): string {
    let out = this.begin() + this.closeOpen();
    const status = statusOfStop(this.stop);
    this.finalResponse = responseObject(this.opts, { id: this.id, model: this.model, status, output: this.output, usage, stop: this.stop });
    out += this.event(status === 'incomplete' ? 'response.incomplete' : 'response.completed', { response: this.finalResponse });
    return out;
  }

  error(err: GatewayError): string {
    return this.event('error', { code: err.code, message: err.message, param: null });
  }

  final(): unknown {
    return this.finalResponse;
  }

  private begin(): string {
    if (this.started) return '';
    this.started = true;
    const response = responseObject(this.opts, { id: this.id, model: this.model, status: 'in_progress', output: [], usage: null });
    return this.event('response.created', { response }) + this.event('response.in_progress', { response });
  }

  private openItem(item: Json): string {
    const out = this.closeOpen();
    const index = this.output.length;
    this.output.push(item);
    this.open = { item, index };
    return out + this.event('response.output_item.added', { output_index: index, item: structuredClone(item) });
  }

  private closeOpen(): string {
    const o = this.open;
    if (!o) return '';
    this.open = null;
    const { item, index } = o;
    let out = '';
    if (item.type === 'message') {
      const part = item.content[0];
      out += this.event('response.output_text.done', { item_id: item.id, output_index: index, content_index: 0, text: part.text, logprobs: [] });
      out += this.event('response.content_part.done', { item_id: item.id, output_index: index, content_index: 0, part });
    } else if (item.type === 'reasoning') {
      const part = item.summary[0];
      out += this.event('response.reasoning_summary_text.done', { item_id: item.id, output_index: index, summary_index: 0, text: part.text });
      out += this.event('response.reasoning_summary_part.done', { item_id: item.id, output_index: index, summary_index: 0, part });
    } else if (item.type === 'function_call') {
      if (!item.arguments) item.arguments = '{}';
      out += this.event('response.function_call_arguments.done', { item_id: item.id, output_index: index, name: item.name, arguments: item.arguments });
    }
    if (item.status) item.status = 'completed';
    return out + this.event('response.output_item.done', { output_index: index, item });
  }

  private event(type: string, body: Json): string {
    return eventFrame(type, JSON.stringify({ type, sequence_number: this.seq++, ...body }));
  }
}

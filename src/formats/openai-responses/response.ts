import { UpstreamFailure } from '../../upstream/failure.js';
import { parseUpstreamJson } from '../../upstream/json.js';
import type { ClientOptions } from '../hub/codec.js';
import type { HubPart, HubResponse, HubStop, HubUsage } from '../hub/types.js';
import { hubUsageOf, localId, settleStop } from '../hub/util.js';

// Responses API `response` objects ↔ the hub.

type Json = Record<string, any>;

export function hubUsageOfResponses(u: Json | null | undefined): HubUsage | null {
  if (!u || typeof u !== 'object') return null;
  return hubUsageOf(Number(u.input_tokens ?? 0), Number(u.output_tokens ?? 0), u.input_tokens_details?.cached_tokens, u.output_tokens_details?.reasoning_tokens);
}

export function responsesUsageOf(u: HubUsage | null): Json {
  const input = u?.input ?? 0;
  const output = u?.output ?? 0;
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: u?.cachedInput ?? 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: u?.reasoning ?? 0 },
    total_tokens: input + output,
  };
}

/** How a response ended, from its status and output. */
export function responsesStop(r: Json): HubStop {
  if (r.status === 'incomplete') return r.incomplete_details?.reason === 'content_filter' ? 'content_filter' : 'length';
  if (Array.isArray(r.output) && r.output.some((i: Json) => i?.type === 'function_call')) return 'tool';
  return 'end';
}

/** The hub parts of a list of output items. */
export function partsOfOutput(output: Json[]): HubPart[] {
  const parts: HubPart[] = [];
  for (const item of output) {
    if (item?.type === 'message') {
      for (const c of item.content ?? []) {
        if (c?.type === 'output_text' && c.text) parts.push({ type: 'text', text: c.text });
        else if (c?.type === 'refusal' && c.refusal) parts.push({ type: 'text', text: c.refusal });
      }
    } else if (item?.type === 'function_call') {
      parts.push({ type: 'tool_call', id: item.call_id ?? item.id, name: item.name ?? '', arguments: item.arguments ?? '' });
    } else if (item?.type === 'reasoning') {
      const text = (item.summary ?? []).map((s: Json) => s?.text ?? '').join('') || (item.content ?? []).map((s: Json) => s?.text ?? '').join('');
      if (text) parts.push({ type: 'reasoning', text });
    }
  }
  return parts;
}

export function decodeResponsesResponse(text: string): HubResponse {
  const r = parseUpstreamJson(text, 200) as Json;
  if (!r || typeof r !== 'object' || r.object !== 'response' || !Array.isArray(r.output)) throw new UpstreamFailure('malformed', 'the upstream answer is not a response', 200);
  if (r.status === 'failed') throw new UpstreamFailure('status', r.error?.message ?? 'the upstream response failed', 500, r.error?.code ?? '');
  return { id: r.id, model: r.model, parts: partsOfOutput(r.output), stop: responsesStop(r), usage: hubUsageOfResponses(r.usage) };
}

/** Output items of the hub's parts, each with a fresh id (as OpenAI names them: msg_, fc_, rs_). */
export function outputItemsOf(parts: HubPart[]): Json[] {
  const items: Json[] = [];
  let message: Json | null = null;
  for (const p of parts) {
    if (p.type === 'text') {
      if (!message) {
        message = { id: localId('msg_'), type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: '', annotations: [], logprobs: [] }] };
        items.push(message);
      }
      message.content[0].text += p.text;
    } else if (p.type === 'reasoning') {
      items.push({ id: localId('rs_'), type: 'reasoning', summary: [{ type: 'summary_text', text: p.text }] });
      message = null;
    } else if (p.type === 'tool_call') {
      items.push({ id: localId('fc_'), type: 'function_call', status: 'completed', arguments: p.arguments || '{}', call_id: p.id, name: p.name });
      message = null;
    }
  }
  return items;
}

/** A `response` object: what every Responses answer (and stream event) is built around. */
export function responseObject(opts: ClientOptions, f: { id: string; model: string; status: string; output: Json[]; usage: HubUsage | null; stop?: HubStop }): Json {
  const incomplete = f.status === 'incomplete' ? { reason: f.stop === 'content_filter' ? 'content_filter' : 'max_output_tokens' } : null;
  return {
    id: f.id,
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    status: f.status,
    error: null,
    incomplete_details: incomplete,
    instructions: null,
    max_output_tokens: null,
    model: f.model,
    output: f.output,
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    store: true,
    temperature: 1,
    text: { format: { type: 'text' } },
    tool_choice: 'auto',
    tools: [],
    top_p: 1,
    truncation: 'disabled',
    user: null,
    metadata: {},
    ...opts.echo,
    usage: f.usage ? responsesUsageOf(f.usage) : null,
  };
}

export function statusOfStop(stop: HubStop): string {
  return stop === 'length' || stop === 'content_filter' ? 'incomplete' : 'completed';
}

export function encodeResponsesResponse(r: HubResponse, opts: ClientOptions): Json {
  const stop = settleStop(r);
  return responseObject(opts, { id: opts.responseId ?? localId('resp_'), model: r.model || opts.model, status: statusOfStop(stop), output: outputItemsOf(r.parts), usage: r.usage, stop });
}

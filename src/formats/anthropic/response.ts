import { UpstreamFailure } from '../../upstream/failure.js';
import { parseUpstreamJson } from '../../upstream/json.js';
import type { ReportedUsage } from '../chat-stream.js';
import type { ClientOptions } from '../hub/codec.js';
import type { HubPart, HubRequest, HubResponse, HubStop, HubUsage } from '../hub/types.js';
import { argsObject, settleStop } from '../hub/util.js';
import { JSON_TOOL } from './request.js';
import type { AnthropicBlock, AnthropicMessage, AnthropicStopReason, AnthropicUsage } from './types.js';

// Anthropic messages ↔ the hub.

export function anthropicStop(r: AnthropicStopReason | string | null | undefined): HubStop {
  switch (r) {
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool';
    case 'stop_sequence':
      return 'stop_sequence';
    case 'refusal':
      return 'content_filter';
    default:
      // end_turn, pause_turn
      return 'end';
  }
}

export function stopReasonOf(s: HubStop): AnthropicStopReason {
  switch (s) {
    case 'length':
      return 'max_tokens';
    case 'tool':
      return 'tool_use';
    case 'stop_sequence':
      return 'stop_sequence';
    case 'content_filter':
      return 'refusal';
    default:
      return 'end_turn';
  }
}

/** Input tokens billed: fresh input plus cache reads and writes. */
export function anthropicInputTokens(u: Partial<AnthropicUsage> | undefined): number | null {
  if (u?.input_tokens == null) return null;
  return u.input_tokens + (u.cache_read_input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0);
}

/** The cache reads and writes within those input tokens, those the usage reports. */
export function anthropicCacheTokens(u: Partial<AnthropicUsage> | undefined): Pick<ReportedUsage, 'cachedInput' | 'cacheWrite'> {
  const out: Pick<ReportedUsage, 'cachedInput' | 'cacheWrite'> = {};
  if (u?.cache_read_input_tokens != null) out.cachedInput = u.cache_read_input_tokens;
  if (u?.cache_creation_input_tokens != null) out.cacheWrite = u.cache_creation_input_tokens;
  return out;
}

export function hubUsageOfAnthropic(u: Partial<AnthropicUsage> | undefined): Partial<HubUsage> {
  const out: Partial<HubUsage> = {};
  const input = anthropicInputTokens(u);
  if (input !== null) out.input = input;
  if (u?.output_tokens != null) out.output = u.output_tokens;
  if (u?.cache_read_input_tokens) out.cachedInput = u.cache_read_input_tokens;
  if (u?.cache_creation_input_tokens) out.cacheWrite = u.cache_creation_input_tokens;
  return out;
}

/** Anthropic counts cache reads and writes apart from input_tokens. */
export function anthropicUsageOf(u: HubUsage | null): AnthropicUsage {
  const cached = u?.cachedInput ?? 0;
  const written = u?.cacheWrite ?? 0;
  return { input_tokens: Math.max(0, (u?.input ?? 0) - cached - written), output_tokens: u?.output ?? 0, cache_read_input_tokens: cached, cache_creation_input_tokens: written };
}

/** Anthropic ids start with msg_; another format's id stays recognisable inside. */
export function anthropicMessageId(id: string | undefined): string {
  if (id?.startsWith('msg_')) return id;
  return `msg_${id || Date.now().toString(36)}`;
}

/** True when the request emulates JSON mode with the forced JSON tool (encodeAnthropicRequest). */
export function emulatesJson(req: HubRequest): boolean {
  return req.responseFormat?.type === 'json_object';
}

export function decodeAnthropicResponse(text: string, req: HubRequest): HubResponse {
  const m = parseUpstreamJson(text, 200) as AnthropicMessage;
  if (!m || typeof m !== 'object' || m.type !== 'message' || !Array.isArray(m.content)) throw new UpstreamFailure('malformed', 'the upstream answer is not a message', 200);
  const json = emulatesJson(req);
  const parts: HubPart[] = [];
  let stop = anthropicStop(m.stop_reason);
  for (const b of m.content) {
    const block = b as AnthropicBlock & { thinking?: string; signature?: string };
    if (block.type === 'text') parts.push({ type: 'text', text: (block as { text: string }).text });
    else if (block.type === 'thinking' && typeof block.thinking === 'string') parts.push({ type: 'reasoning', text: block.thinking, ...(block.signature ? { signature: block.signature } : {}) });
    else if (block.type === 'tool_use') {
      const u = block as Extract<AnthropicBlock, { type: 'tool_use' }>;
      if (json && u.name === JSON_TOOL) {
        parts.push({ type: 'text', text: JSON.stringify(u.input ?? {}) });
        if (stop === 'tool') stop = 'end';
      } else parts.push({ type: 'tool_call', id: u.id, name: u.name, arguments: JSON.stringify(u.input ?? {}) });
    }
    // redacted thinking and server-tool blocks have no counterpart in the other formats.
  }
  const u = hubUsageOfAnthropic(m.usage);
  return { id: m.id, model: m.model, parts, stop, stopSequence: m.stop_sequence, usage: { input: u.input ?? 0, output: u.output ?? 0, ...(u.cachedInput ? { cachedInput: u.cachedInput } : {}), ...(u.cacheWrite ? { cacheWrite: u.cacheWrite } : {}) } };
}

export function encodeAnthropicResponse(r: HubResponse, opts: ClientOptions): AnthropicMessage {
  const content: AnthropicBlock[] = [];
  for (const p of r.parts) {
    if (p.type === 'reasoning') content.push({ type: 'thinking', thinking: p.text, signature: p.signature ?? '' });
    else if (p.type === 'text') {
      if (p.text) content.push({ type: 'text', text: p.text });
    } else if (p.type === 'tool_call') content.push({ type: 'tool_use', id: p.id, name: p.name, input: argsObject(p.arguments) });
  }
  return {
    id: anthropicMessageId(r.id),
    type: 'message',
    role: 'assistant',
    model: r.model || opts.model,
    content,
    stop_reason: stopReasonOf(settleStop(r)),
    stop_sequence: r.stopSequence ?? null,
    usage: anthropicUsageOf(r.usage),
  };
}

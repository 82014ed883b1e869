import { UpstreamFailure } from '../../upstream/failure.js';
import { parseUpstreamJson } from '../../upstream/json.js';
import type { ClientOptions } from '../hub/codec.js';
import type { HubPart, HubResponse, HubStop, HubUsage } from '../hub/types.js';
import { hubUsageOf, reasoningOfParts, settleStop, textOfParts, toolCallsOf } from '../hub/util.js';
import type { OpenAIChatCompletion, OpenAIFinishReason, OpenAIUsage } from './types.js';

// Chat completions ↔ the hub.

export function openaiStop(r: OpenAIFinishReason | string | null | undefined): HubStop {
  switch (r) {
    case 'length':
      return 'length';
    case 'tool_calls':
    case 'function_call':
      return 'tool';
    case 'content_filter':
      return 'content_filter';
    default:
      return 'end';
  }
}

export function finishReasonOf(s: HubStop): OpenAIFinishReason {
  switch (s) {
    case 'length':
      return 'length';
    case 'tool':
      return 'tool_calls';
    case 'content_filter':
      return 'content_filter';
    default:
      return 'stop';
  }
}

export function hubUsageOfOpenAI(u: OpenAIUsage | null | undefined): HubUsage | null {
  if (!u) return null;
  const reasoning = (u.completion_tokens_details as { reasoning_tokens?: number } | undefined)?.reasoning_tokens;
  return hubUsageOf(u.prompt_tokens ?? 0, u.completion_tokens ?? 0, u.prompt_tokens_details?.cached_tokens, reasoning);
}

export function openaiUsageOf(u: HubUsage | null): OpenAIUsage {
  const input = u?.input ?? 0;
  const output = u?.output ?? 0;
  return {
    prompt_tokens: input,
    completion_tokens: output,
    total_tokens: input + output,
    prompt_tokens_details: { cached_tokens: u?.cachedInput ?? 0 },
    completion_tokens_details: { reasoning_tokens: u?.reasoning ?? 0 },
  };
}

export function decodeOpenAIChatResponse(text: string): HubResponse {
  const c = parseUpstreamJson(text, 200) as OpenAIChatCompletion;
  if (!c || typeof c !== 'object' || !Array.isArray(c.choices)) throw new UpstreamFailure('malformed', 'the upstream answer is not a chat completion', 200);
  const choice = c.choices[0];
  const msg = choice?.message as (OpenAIChatCompletion['choices'][number]['message'] & { reasoning_content?: unknown }) | undefined;
  const parts: HubPart[] = [];
  if (typeof msg?.reasoning_content === 'string' && msg.reasoning_content) parts.push({ type: 'reasoning', text: msg.reasoning_content });
  if (typeof msg?.content === 'string' && msg.content) parts.push({ type: 'text', text: msg.content });
  if (typeof msg?.refusal === 'string' && msg.refusal) parts.push({ type: 'text', text: msg.refusal });
  for (const call of msg?.tool_calls ?? []) parts.push({ type: 'tool_call', id: call.id, name: call.function?.name ?? '', arguments: call.function?.arguments ?? '' });
  return { id: c.id, model: c.model, parts, stop: openaiStop(choice?.finish_reason), usage: hubUsageOfOpenAI(c.usage) };
}

export function encodeOpenAIChatResponse(r: HubResponse, opts: ClientOptions, created = Math.floor(Date.now() / 1000)): OpenAIChatCompletion {
  const calls = toolCallsOf(r.parts);
  const text = textOfParts(r.parts);
  const message: OpenAIChatCompletion['choices'][number]['message'] & { reasoning_content?: string } = {
    role: 'assistant',
    // OpenAI sends null content on a pure tool-call answer.
    content: text || (calls.length ? null : ''),
    refusal: null,
  };
  const reasoning = reasoningOfParts(r.parts);
  // reasoning_content: the field OpenAI-compatible APIs (DeepSeek, vLLM, new-api) carry thinking in.
  if (reasoning) message.reasoning_content = reasoning;
  if (calls.length) message.tool_calls = calls.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: c.arguments || '{}' } }));
  return {
    id: chatCompletionId(r.id),
    object: 'chat.completion',
    created,
    model: r.model || opts.model,
    choices: [{ index: 0, message, finish_reason: finishReasonOf(settleStop(r)), logprobs: null }],
    usage: openaiUsageOf(r.usage),
  };
}

export function chatCompletionId(id: string): string {
  // Another format's id stays as it is (it identifies the answer in the upstream's logs).
  return id || `chatcmpl-${Date.now().toString(36)}`;
}

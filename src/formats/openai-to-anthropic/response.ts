import type { AnthropicBlock, AnthropicMessage, AnthropicStopReason, AnthropicUsage } from '../anthropic-types.js';
import type { OpenAIChatCompletion, OpenAIFinishReason, OpenAIUsage } from '../openai-types.js';

/** An OpenAI chat completion (its first choice) as an Anthropic message. */
export function openaiToAnthropicResponse(c: OpenAIChatCompletion): AnthropicMessage {
  const choice = c.choices[0];
  const msg = choice?.message;
  const content: AnthropicBlock[] = [];
  if (typeof msg?.content === 'string' && msg.content) content.push({ type: 'text', text: msg.content });
  if (typeof msg?.refusal === 'string' && msg.refusal) content.push({ type: 'text', text: msg.refusal });
  for (const call of msg?.tool_calls ?? []) {
    content.push({ type: 'tool_use', id: call.id, name: call.function?.name ?? '', input: toolInput(call.function?.arguments) });
  }
  return {
    id: anthropicMessageId(c.id),
    type: 'message',
    role: 'assistant',
    model: c.model,
    content,
    stop_reason: anthropicStopReason(choice?.finish_reason ?? null),
    stop_sequence: null,
    usage: anthropicUsage(c.usage),
  };
}

/** Anthropic ids start with msg_; the upstream's id stays recognisable inside. */
export function anthropicMessageId(openaiId: string | undefined): string {
  return `msg_${openaiId || Date.now().toString(36)}`;
}

/**
 * OpenAI reports no matched stop sequence, so "stop" is always end_turn; content_filter is the
 * closest thing to Anthropic's refusal.
 */
export function anthropicStopReason(r: OpenAIFinishReason | null): AnthropicStopReason {
  switch (r) {
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
    case 'function_call':
      return 'tool_use';
    case 'content_filter':
      return 'refusal';
    default:
      return 'end_turn';
  }
}

/** OpenAI's prompt_tokens include cached tokens; Anthropic counts cache reads apart. */
export function anthropicUsage(u: OpenAIUsage | null | undefined): AnthropicUsage {
  const cached = u?.prompt_tokens_details?.cached_tokens ?? 0;
  const prompt = u?.prompt_tokens ?? 0;
  return { input_tokens: Math.max(0, prompt - cached), output_tokens: u?.completion_tokens ?? 0, cache_read_input_tokens: cached, cache_creation_input_tokens: 0 };
}

/**
 * Anthropic's tool input must be an object. Arguments a model produced as broken JSON cannot be
 * one; they become {} rather than a made-up key (docs/chat.md).
 */
export function toolInput(args: string | undefined): Record<string, unknown> {
  if (!args) return {};
  try {
    const v: unknown = JSON.parse(args);
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

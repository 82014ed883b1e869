import type { AnthropicBlock, AnthropicMessage, AnthropicStopReason, AnthropicUsage } from '../anthropic-types.js';
import type { OpenAIChatCompletion, OpenAIFinishReason, OpenAIToolCall, OpenAIUsage } from '../openai-types.js';

/** An Anthropic message as an OpenAI chat completion with one choice. */
export function anthropicToOpenAIResponse(m: AnthropicMessage, created = Math.floor(Date.now() / 1000)): OpenAIChatCompletion {
  let text = '';
  const calls: OpenAIToolCall[] = [];
  for (const b of m.content ?? []) {
    if (b.type === 'text') text += (b as { text: string }).text;
    else if (b.type === 'tool_use') {
      const u = b as Extract<AnthropicBlock, { type: 'tool_use' }>;
      calls.push({ id: u.id, type: 'function', function: { name: u.name, arguments: JSON.stringify(u.input ?? {}) } });
    }
    // thinking and server-tool blocks have no Chat Completions counterpart.
  }
  const message: OpenAIChatCompletion['choices'][number]['message'] = {
    role: 'assistant',
    // OpenAI sends null content on a pure tool-call answer.
    content: text || (calls.length ? null : ''),
    refusal: null,
  };
  if (calls.length) message.tool_calls = calls;
  return {
    id: m.id,
    object: 'chat.completion',
    created,
    model: m.model,
    choices: [{ index: 0, message, finish_reason: openaiFinishReason(m.stop_reason), logprobs: null }],
    usage: openaiUsage(m.usage),
  };
}

export function openaiFinishReason(r: AnthropicStopReason | null | undefined): OpenAIFinishReason {
  switch (r) {
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
      return 'content_filter';
    default:
      // end_turn, stop_sequence, pause_turn
      return 'stop';
  }
}

/** Anthropic counts cache reads and writes apart from input_tokens; OpenAI's prompt_tokens hold all. */
export function openaiUsage(u: Partial<AnthropicUsage> | undefined): OpenAIUsage {
  const cacheRead = u?.cache_read_input_tokens ?? 0;
  const prompt = (u?.input_tokens ?? 0) + cacheRead + (u?.cache_creation_input_tokens ?? 0);
  const completion = u?.output_tokens ?? 0;
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion, prompt_tokens_details: { cached_tokens: cacheRead } };
}

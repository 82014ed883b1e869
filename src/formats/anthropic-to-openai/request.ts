import { errors } from '../../http/errors.js';
import type { AnthropicBlock, AnthropicMessageParam, AnthropicRequest, AnthropicToolChoice } from '../anthropic-types.js';
import type { OpenAIChatRequest, OpenAIContentPart, OpenAIMessage, OpenAITool, OpenAIToolCall, OpenAIToolChoice } from '../openai-types.js';

/**
 * An Anthropic Messages request as an OpenAI Chat Completions request. Tool results become `tool`
 * messages, images data: URLs, PDFs inline files. Knobs OpenAI lacks (top_k, thinking,
 * cache_control) are dropped; server tools, which only Anthropic can run, are a 400 (docs/chat.md).
 */
export function anthropicToOpenAIRequest(req: AnthropicRequest): OpenAIChatRequest {
  const messages: OpenAIMessage[] = [];
  if (typeof req.system === 'string') {
    if (req.system) messages.push({ role: 'system', content: req.system });
  } else if (Array.isArray(req.system) && req.system.length) {
    messages.push({ role: 'system', content: req.system.map((b) => b.text).join('\n\n') });
  }
  req.messages.forEach((m, i) => {
    if (m.role === 'user') userMessages(m, i, messages);
    else if (m.role === 'assistant') messages.push(assistantMessage(m));
    else throw errors.invalidRequest(`messages[${i}].role must be "user" or "assistant".`, `messages[${i}].role`);
  });

  // max_completion_tokens counts reasoning too, like Anthropic's max_tokens (and is the name
  // OpenAI's reasoning models require).
  const out: OpenAIChatRequest = { model: req.model, messages, max_completion_tokens: req.max_tokens };
  if (req.stream === true) out.stream = true;
  if (req.temperature != null) out.temperature = req.temperature;
  if (req.top_p != null) out.top_p = req.top_p;
  if (req.stop_sequences?.length) out.stop = req.stop_sequences;
  if (req.metadata?.user_id) out.user = req.metadata.user_id;
  if (req.tools?.length) {
    out.tools = req.tools.map(toolOf);
    if (req.tool_choice) {
      out.tool_choice = toolChoiceOf(req.tool_choice);
      if ('disable_parallel_tool_use' in req.tool_choice && req.tool_choice.disable_parallel_tool_use) out.parallel_tool_calls = false;
    }
  }
  return out;
}

/** One Anthropic user turn: its tool results first (as `tool` messages), then what the user said. */
function userMessages(m: AnthropicMessageParam, i: number, out: OpenAIMessage[]): void {
  if (typeof m.content === 'string') {
    out.push({ role: 'user', content: m.content });
    return;
  }
  const parts: OpenAIContentPart[] = [];
  m.content.forEach((b, j) => {
    const where = `messages[${i}].content[${j}]`;
    if (b.type === 'tool_result') {
      const r = b as Extract<AnthropicBlock, { type: 'tool_result' }>;
      out.push({ role: 'tool', tool_call_id: r.tool_use_id, content: toolResultText(r.content) });
      return;
    }
    const part = blockToPart(b, where);
    if (part) parts.push(part);
  });
  if (!parts.length) return;
  const onlyText = parts.length === 1 && parts[0].type === 'text';
  out.push({ role: 'user', content: onlyText ? (parts[0] as { text: string }).text : parts });
}

/** OpenAI tool messages hold text only; images inside a tool result are dropped. */
function toolResultText(content: Extract<AnthropicBlock, { type: 'tool_result' }>['content']): string {
  if (content == null) return '';
  if (typeof content === 'string') return content;
  return content
    .filter((b) => b.type === 'text')
    .map((b) => (b as { text: string }).text)
    .join('\n');
}

function blockToPart(b: AnthropicBlock, where: string): OpenAIContentPart | null {
  switch (b.type) {
    case 'text':
      return { type: 'text', text: (b as { text: string }).text };
    case 'image': {
      const s = (b as Extract<AnthropicBlock, { type: 'image' }>).source;
      if (s?.type === 'base64') return { type: 'image_url', image_url: { url: `data:${s.media_type};base64,${s.data}` } };
      if (s?.type === 'url') return { type: 'image_url', image_url: { url: s.url } };
      throw errors.invalidRequest(`${where}: only base64 and url image sources are supported for this model.`, where);
    }
    case 'document': {
      const s = (b as Extract<AnthropicBlock, { type: 'document' }>).source;
      if (s?.type === 'text') return { type: 'text', text: s.data };
      if (s?.type === 'base64') return { type: 'file', file: { filename: 'document.pdf', file_data: `data:${s.media_type};base64,${s.data}` } };
      throw errors.invalidRequest(`${where}: only base64 and text documents are supported for this model.`, where);
    }
    case 'thinking':
    case 'redacted_thinking':
      return null;
    default:
      throw errors.invalidRequest(`${where}: content blocks of type "${b.type}" are not supported for this model.`, where);
  }
}

function assistantMessage(m: AnthropicMessageParam): OpenAIMessage {
  if (typeof m.content === 'string') return { role: 'assistant', content: m.content };
  let text = '';
  const calls: OpenAIToolCall[] = [];
  for (const b of m.content) {
    if (b.type === 'text') text += (b as { text: string }).text;
    else if (b.type === 'tool_use') {
      const u = b as Extract<AnthropicBlock, { type: 'tool_use' }>;
      calls.push({ id: u.id, type: 'function', function: { name: u.name, arguments: JSON.stringify(u.input ?? {}) } });
    }
    // thinking blocks and server-tool results have no OpenAI counterpart: dropped.
  }
  const msg: OpenAIMessage = { role: 'assistant', content: text || (calls.length ? null : '') };
  if (calls.length) msg.tool_calls = calls;
  return msg;
}

function toolOf(t: NonNullable<AnthropicRequest['tools']>[number], i: number): OpenAITool {
  if (t.type !== undefined && t.type !== 'custom') {
    throw errors.invalidRequest(`tools[${i}]: the server tool "${t.type}" runs only on Anthropic; this model's channel cannot run it.`, `tools[${i}]`);
  }
  const fn: OpenAITool['function'] = { name: t.name, parameters: t.input_schema ?? { type: 'object', properties: {} } };
  if (t.description) fn.description = t.description;
  return { type: 'function', function: fn };
}

function toolChoiceOf(c: AnthropicToolChoice): OpenAIToolChoice {
  switch (c.type) {
    case 'none':
      return 'none';
    case 'any':
      return 'required';
    case 'tool':
      if (!c.name) throw errors.invalidRequest('tool_choice.name is required when tool_choice.type is "tool".', 'tool_choice');
      return { type: 'function', function: { name: c.name } };
    default:
      return 'auto';
  }
}

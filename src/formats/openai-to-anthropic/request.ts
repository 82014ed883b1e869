import { errors } from '../../http/errors.js';
import type {
  AnthropicBlock,
  AnthropicMessageParam,
  AnthropicRequest,
  AnthropicTextBlock,
  AnthropicTool,
  AnthropicToolChoice,
} from '../anthropic-types.js';
import type { OpenAIChatRequest, OpenAIContentPart, OpenAIMessage } from '../openai-types.js';

/**
 * Anthropic requires max_tokens; an OpenAI client may omit it. 4096 is the largest output every
 * current Claude model accepts (the smallest model ceiling), so it is never rejected as too large.
 */
export const DEFAULT_ANTHROPIC_MAX_TOKENS = 4096;

/**
 * An OpenAI Chat Completions request as an Anthropic Messages request. Input that Anthropic cannot
 * represent (audio, several choices, legacy functions) is a 400, never silently lost; sampling
 * knobs Anthropic lacks (penalties, seed, logprobs, response_format …) are dropped (docs/chat.md).
 */
export function openaiToAnthropicRequest(req: OpenAIChatRequest): AnthropicRequest {
  if (req.n != null && req.n > 1) throw errors.invalidRequest('n > 1 is not supported by this model\'s provider (Anthropic answers with one choice).', 'n');
  if (req.functions !== undefined || req.function_call !== undefined) {
    throw errors.invalidRequest('The legacy "functions" parameters are not supported for this model; use "tools".', 'functions');
  }
  const system: AnthropicTextBlock[] = [];
  const messages: AnthropicMessageParam[] = [];
  req.messages.forEach((m, i) => {
    switch (m.role) {
      case 'system':
      case 'developer':
        for (const text of textsOf(m.content, i)) if (text) system.push({ type: 'text', text });
        break;
      case 'user':
        append(messages, 'user', userBlocks(m.content, i));
        break;
      case 'assistant':
        append(messages, 'assistant', assistantBlocks(m, i));
        break;
      case 'tool':
        append(messages, 'user', [{ type: 'tool_result', tool_use_id: m.tool_call_id ?? '', content: textsOf(m.content, i).join('') }]);
        break;
      default:
        throw errors.invalidRequest(`messages[${i}].role "${String(m.role)}" is not supported for this model.`, `messages[${i}].role`);
    }
  });

  const out: AnthropicRequest = {
    model: req.model,
    messages,
    max_tokens: req.max_completion_tokens ?? req.max_tokens ?? DEFAULT_ANTHROPIC_MAX_TOKENS,
  };
  if (system.length === 1) out.system = system[0].text;
  else if (system.length > 1) out.system = system;
  if (req.stream === true) out.stream = true;
  // OpenAI's range is 0–2, Anthropic's 0–1: higher values mean "as random as it gets".
  if (req.temperature != null) out.temperature = Math.min(1, req.temperature);
  if (req.top_p != null) out.top_p = req.top_p;
  const stop = typeof req.stop === 'string' ? [req.stop] : req.stop;
  if (stop && stop.length) out.stop_sequences = stop.filter((s) => s.length > 0);
  if (req.user) out.metadata = { user_id: req.user };
  if (req.tools?.length) {
    out.tools = req.tools.map(toolOf);
    const choice = toolChoiceOf(req.tool_choice, req.parallel_tool_calls === false);
    if (choice) out.tool_choice = choice;
  }
  return out;
}

/** Consecutive messages of one role become one (tool results then the user's next words, say). */
function append(messages: AnthropicMessageParam[], role: 'user' | 'assistant', blocks: AnthropicBlock[]): void {
  if (!blocks.length) return; // Anthropic rejects empty messages; an empty one carries nothing anyway
  const last = messages[messages.length - 1];
  if (last && last.role === role) {
    const prev = typeof last.content === 'string' ? [{ type: 'text', text: last.content } as AnthropicTextBlock] : last.content;
    last.content = [...prev, ...blocks];
    return;
  }
  messages.push({ role, content: blocks.length === 1 && blocks[0].type === 'text' ? (blocks[0] as AnthropicTextBlock).text : blocks });
}

function textsOf(content: OpenAIMessage['content'], i: number): string[] {
  if (content == null) return [];
  if (typeof content === 'string') return [content];
  return content.map((p, j) => {
    if (p.type === 'text' && typeof (p as { text?: unknown }).text === 'string') return (p as { text: string }).text;
    throw errors.invalidRequest(`messages[${i}].content[${j}] must be a text part here.`, `messages[${i}].content`);
  });
}

function userBlocks(content: OpenAIMessage['content'], i: number): AnthropicBlock[] {
  if (content == null) return [];
  if (typeof content === 'string') return content ? [{ type: 'text', text: content }] : [];
  const blocks: AnthropicBlock[] = [];
  content.forEach((p, j) => {
    const b = partToBlock(p, `messages[${i}].content[${j}]`);
    if (b) blocks.push(b);
  });
  return blocks;
}

function partToBlock(p: OpenAIContentPart, where: string): AnthropicBlock | null {
  switch (p.type) {
    case 'text': {
      const text = (p as { text?: unknown }).text;
      if (typeof text !== 'string') throw errors.invalidRequest(`${where}.text must be a string.`, where);
      return text ? { type: 'text', text } : null;
    }
    case 'image_url': {
      const url = (p as { image_url?: { url?: unknown } }).image_url?.url;
      if (typeof url !== 'string' || !url) throw errors.invalidRequest(`${where}.image_url.url must be a URL or a data: URL.`, where);
      if (!url.startsWith('data:')) return { type: 'image', source: { type: 'url', url } };
      const d = parseDataUrl(url);
      if (!d) throw errors.invalidRequest(`${where}.image_url.url is not a valid base64 data: URL.`, where);
      return { type: 'image', source: { type: 'base64', media_type: d.mediaType, data: d.data } };
    }
    case 'file': {
      const data = (p as { file?: { file_data?: unknown } }).file?.file_data;
      const d = typeof data === 'string' ? parseDataUrl(data) : null;
      if (!d) throw errors.invalidRequest(`${where}: only files sent inline as file_data (a base64 data: URL) can be passed to this model.`, where);
      return { type: 'document', source: { type: 'base64', media_type: d.mediaType, data: d.data } };
    }
    default:
      throw errors.invalidRequest(`${where}: content parts of type "${String(p.type)}" are not supported for this model.`, where);
  }
}

/** `data:<media type>;base64,<data>` → its parts; null when it is not that shape. */
export function parseDataUrl(url: string): { mediaType: string; data: string } | null {
  const comma = url.indexOf(',');
  if (comma < 0) return null;
  const head = url.slice(5, comma); // after "data:"
  if (!head.endsWith(';base64')) return null;
  const mediaType = head.slice(0, -7);
  if (!mediaType.includes('/')) return null;
  return { mediaType, data: url.slice(comma + 1) };
}

function assistantBlocks(m: OpenAIMessage, i: number): AnthropicBlock[] {
  const blocks: AnthropicBlock[] = [];
  if (typeof m.content === 'string') {
    if (m.content) blocks.push({ type: 'text', text: m.content });
  } else if (Array.isArray(m.content)) {
    m.content.forEach((p, j) => {
      // Assistant parts are text or refusal.
      const text = (p as { text?: unknown; refusal?: unknown }).text ?? (p as { refusal?: unknown }).refusal;
      if (typeof text !== 'string') throw errors.invalidRequest(`messages[${i}].content[${j}] must be a text part.`, `messages[${i}].content`);
      if (text) blocks.push({ type: 'text', text });
    });
  }
  for (const [k, call] of (m.tool_calls ?? []).entries()) {
    blocks.push({ type: 'tool_use', id: call.id, name: call.function?.name ?? '', input: parseArguments(call.function?.arguments, `messages[${i}].tool_calls[${k}]`) });
  }
  return blocks;
}

function parseArguments(args: unknown, where: string): Record<string, unknown> {
  if (args == null || args === '') return {};
  if (typeof args === 'string') {
    try {
      const v: unknown = JSON.parse(args);
      if (v && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
    } catch {
      // reported below
    }
  }
  throw errors.invalidRequest(`${where}.function.arguments must be a JSON object in a string.`, where);
}

function toolOf(t: NonNullable<OpenAIChatRequest['tools']>[number], i: number): AnthropicTool {
  if (t.type !== 'function' || !t.function?.name) {
    throw errors.invalidRequest(`tools[${i}]: only function tools with a name are supported for this model.`, `tools[${i}]`);
  }
  const tool: AnthropicTool = { name: t.function.name, input_schema: t.function.parameters ?? { type: 'object', properties: {} } };
  if (t.function.description) tool.description = t.function.description;
  return tool;
}

function toolChoiceOf(choice: OpenAIChatRequest['tool_choice'], serial: boolean): AnthropicToolChoice | undefined {
  const extra = serial ? { disable_parallel_tool_use: true } : {};
  if (choice === undefined || choice === null) return serial ? { type: 'auto', ...extra } : undefined;
  if (choice === 'none') return { type: 'none' };
  if (choice === 'auto') return { type: 'auto', ...extra };
  if (choice === 'required') return { type: 'any', ...extra };
  if (typeof choice === 'object' && choice.function?.name) return { type: 'tool', name: choice.function.name, ...extra };
  throw errors.invalidRequest('tool_choice must be "none", "auto", "required" or {"type":"function","function":{"name":…}}.', 'tool_choice');
}

import { errors } from '../../http/errors.js';
import type { HubMessage, HubPart, HubRequest, HubResponseFormat, HubTool, HubToolChoice } from '../hub/types.js';
import { appendTurn, clientArgs, effortOf, nameToolResults, parseDataUrl } from '../hub/util.js';
import type { OpenAIChatRequest, OpenAIContentPart, OpenAIMessage } from './types.js';

// Chat Completions requests ↔ the hub. Decoding is the client side (what a client sent), encoding
// the upstream side (what an OpenAI-format upstream is sent).

const EFFORTS = new Set(['minimal', 'low', 'medium', 'high']);

export function decodeOpenAIChatRequest(req: OpenAIChatRequest): HubRequest {
  if (req.n != null && req.n > 1) throw errors.invalidRequest("n > 1 is not supported by this model's provider (it answers with one choice).", 'n');
  if (req.functions !== undefined || req.function_call !== undefined) {
    throw errors.invalidRequest('The legacy "functions" parameters are not supported for this model; use "tools".', 'functions');
  }
  const system: string[] = [];
  const messages: HubMessage[] = [];
  req.messages.forEach((m, i) => {
    switch (m.role) {
      case 'system':
      case 'developer':
        for (const text of textsOf(m.content, i)) if (text) system.push(text);
        break;
      case 'user':
        appendTurn(messages, 'user', userParts(m.content, i));
        break;
      case 'assistant':
        appendTurn(messages, 'assistant', assistantParts(m, i));
        break;
      case 'tool':
        appendTurn(messages, 'user', [{ type: 'tool_result', callId: m.tool_call_id ?? '', content: textsOf(m.content, i).join('') }]);
        break;
      default:
        throw errors.invalidRequest(`messages[${i}].role "${String(m.role)}" is not supported for this model.`, `messages[${i}].role`);
    }
  });
  nameToolResults(messages);
  const out: HubRequest = { model: req.model, system, messages, tools: [], stop: [], stream: req.stream === true };
  const max = req.max_completion_tokens ?? req.max_tokens;
  if (max != null) out.maxTokens = max;
  if (req.temperature != null) out.temperature = req.temperature;
  if (req.top_p != null) out.topP = req.top_p;
  const stop = typeof req.stop === 'string' ? [req.stop] : req.stop;
  if (stop) out.stop = stop.filter((s) => s.length > 0);
  if (req.user) out.user = req.user;
  if (req.tools?.length) out.tools = req.tools.map(toolOf);
  const choice = toolChoiceOf(req.tool_choice);
  if (choice) out.toolChoice = choice;
  if (req.parallel_tool_calls === false) out.parallelToolCalls = false;
  const format = responseFormatOf(req.response_format);
  if (format) out.responseFormat = format;
  const effort = req.reasoning_effort;
  if (typeof effort === 'string') {
    if (effort === 'none') out.reasoning = { enabled: false };
    else if (EFFORTS.has(effort)) out.reasoning = { effort: effort as 'low' };
    else throw errors.invalidRequest('reasoning_effort must be "none", "minimal", "low", "medium" or "high".', 'reasoning_effort');
  }
  return out;
}

export function responseFormatOf(f: unknown): HubResponseFormat | undefined {
  if (f == null) return undefined;
  const rf = f as { type?: unknown; json_schema?: { name?: unknown; schema?: unknown; strict?: unknown; description?: unknown } };
  if (rf.type === 'text') return { type: 'text' };
  if (rf.type === 'json_object') return { type: 'json_object' };
  if (rf.type === 'json_schema' && rf.json_schema && typeof rf.json_schema.schema === 'object' && rf.json_schema.schema) {
    const out: HubResponseFormat = { type: 'json_schema', name: typeof rf.json_schema.name === 'string' ? rf.json_schema.name : 'response', schema: rf.json_schema.schema as Record<string, unknown> };
    if (typeof rf.json_schema.strict === 'boolean') out.strict = rf.json_schema.strict;
    if (typeof rf.json_schema.description === 'string') out.description = rf.json_schema.description;
    return out;
  }
  throw errors.invalidRequest('response_format must be {"type":"text"}, {"type":"json_object"} or {"type":"json_schema","json_schema":{"name","schema"}}.', 'response_format');
}

function textsOf(content: OpenAIMessage['content'], i: number): string[] {
  if (content == null) return [];
  if (typeof content === 'string') return [content];
  return content.map((p, j) => {
    if (p.type === 'text' && typeof (p as { text?: unknown }).text === 'string') return (p as { text: string }).text;
    throw errors.invalidRequest(`messages[${i}].content[${j}] must be a text part here.`, `messages[${i}].content`);
  });
}

function userParts(content: OpenAIMessage['content'], i: number): HubPart[] {
  if (content == null) return [];
  if (typeof content === 'string') return content ? [{ type: 'text', text: content }] : [];
  const parts: HubPart[] = [];
  content.forEach((p, j) => {
    const part = partOf(p, `messages[${i}].content[${j}]`);
    if (part) parts.push(part);
  });
  return parts;
}

function partOf(p: OpenAIContentPart, where: string): HubPart | null {
  switch (p.type) {
    case 'text': {
      const text = (p as { text?: unknown }).text;
      if (typeof text !== 'string') throw errors.invalidRequest(`${where}.text must be a string.`, where);
      return text ? { type: 'text', text } : null;
    }
    case 'image_url': {
      const url = (p as { image_url?: { url?: unknown } }).image_url?.url;
      if (typeof url !== 'string' || !url) throw errors.invalidRequest(`${where}.image_url.url must be a URL or a data: URL.`, where);
      if (!url.startsWith('data:')) return { type: 'image', url };
      const d = parseDataUrl(url);
      if (!d) throw errors.invalidRequest(`${where}.image_url.url is not a valid base64 data: URL.`, where);
      return { type: 'image', data: d.data, mediaType: d.mediaType };
    }
    case 'file': {
      const file = (p as { file?: { file_data?: unknown; filename?: unknown } }).file;
      const d = typeof file?.file_data === 'string' ? parseDataUrl(file.file_data) : null;
      if (!d) throw errors.invalidRequest(`${where}: only files sent inline as file_data (a base64 data: URL) can be passed to this model.`, where);
      return { type: 'file', data: d.data, mediaType: d.mediaType, ...(typeof file?.filename === 'string' ? { filename: file.filename } : {}) };
    }
    default:
      throw errors.invalidRequest(`${where}: content parts of type "${String(p.type)}" are not supported for this model.`, where);
  }
}

function assistantParts(m: OpenAIMessage, i: number): HubPart[] {
  const parts: HubPart[] = [];
  const reasoning = (m as { reasoning_content?: unknown }).reasoning_content;
  if (typeof reasoning === 'string' && reasoning) parts.push({ type: 'reasoning', text: reasoning });
  if (typeof m.content === 'string') {
    if (m.content) parts.push({ type: 'text', text: m.content });
  } else if (Array.isArray(m.content)) {
    m.content.forEach((p, j) => {
      const text = (p as { text?: unknown }).text ?? (p as { refusal?: unknown }).refusal;
      if (typeof text !== 'string') throw errors.invalidRequest(`messages[${i}].content[${j}] must be a text part.`, `messages[${i}].content`);
      if (text) parts.push({ type: 'text', text });
    });
  }
  for (const [k, call] of (m.tool_calls ?? []).entries()) {
    parts.push({ type: 'tool_call', id: call.id, name: call.function?.name ?? '', arguments: clientArgs(call.function?.arguments, `messages[${i}].tool_calls[${k}].function.arguments`) });
  }
  return parts;
}

function toolOf(t: NonNullable<OpenAIChatRequest['tools']>[number], i: number): HubTool {
  if (t.type !== 'function' || !t.function?.name) {
    throw errors.invalidRequest(`tools[${i}]: only function tools with a name are supported for this model.`, `tools[${i}]`);
  }
  const tool: HubTool = { name: t.function.name, parameters: t.function.parameters ?? { type: 'object', properties: {} } };
  if (t.function.description) tool.description = t.function.description;
  if (typeof t.function.strict === 'boolean') tool.strict = t.function.strict;
  return tool;
}

function toolChoiceOf(choice: OpenAIChatRequest['tool_choice']): HubToolChoice | undefined {
  if (choice === undefined || choice === null) return undefined;
  if (choice === 'none' || choice === 'auto' || choice === 'required') return choice;
  if (typeof choice === 'object' && choice.function?.name) return { name: choice.function.name };
  throw errors.invalidRequest('tool_choice must be "none", "auto", "required" or {"type":"function","function":{"name":…}}.', 'tool_choice');
}

// ---- hub → an OpenAI-format upstream ----

export function encodeOpenAIChatRequest(r: HubRequest, upstreamModel: string): OpenAIChatRequest {
  const messages: OpenAIMessage[] = [];
  if (r.system.length) messages.push({ role: 'system', content: r.system.join('\n\n') });
  for (const m of r.messages) {
    if (m.role === 'user') userMessages(m.parts, messages);
    else messages.push(assistantMessage(m.parts));
  }
  // max_completion_tokens counts reasoning too (and is the name reasoning models require).
  const out: OpenAIChatRequest = { model: upstreamModel, messages };
  if (r.maxTokens != null) out.max_completion_tokens = r.maxTokens;
  if (r.stream) {
    out.stream = true;
    // Usage at the end of the stream, so what was delivered can be billed.
    out.stream_options = { include_usage: true };
  }
  if (r.temperature != null) out.temperature = r.temperature;
  if (r.topP != null) out.top_p = r.topP;
  if (r.stop.length) out.stop = r.stop.slice(0, 4);
  if (r.user) out.user = r.user;
  if (r.tools.length) {
    out.tools = r.tools.map((t) => ({
      type: 'function' as const,
      function: { name: t.name, parameters: t.parameters, ...(t.description ? { description: t.description } : {}), ...(t.strict != null ? { strict: t.strict } : {}) },
    }));
    if (r.parallelToolCalls === false) out.parallel_tool_calls = false;
  }
  if (r.toolChoice) out.tool_choice = typeof r.toolChoice === 'string' ? r.toolChoice : { type: 'function', function: { name: r.toolChoice.name } };
  const f = r.responseFormat;
  if (f?.type === 'json_object') out.response_format = { type: 'json_object' };
  else if (f?.type === 'json_schema') {
    out.response_format = { type: 'json_schema', json_schema: { name: f.name, schema: f.schema, ...(f.strict != null ? { strict: f.strict } : {}), ...(f.description ? { description: f.description } : {}) } };
  }
  if (r.reasoning) out.reasoning_effort = r.reasoning.enabled === false ? 'none' : effortOf(r.reasoning);
  return out;
}

/** A user turn: its tool results first (as `tool` messages), then what the user said. */
function userMessages(parts: HubPart[], out: OpenAIMessage[]): void {
  const content: OpenAIContentPart[] = [];
  for (const p of parts) {
    switch (p.type) {
      case 'tool_result':
        out.push({ role: 'tool', tool_call_id: p.callId, content: p.content });
        break;
      case 'text':
        content.push({ type: 'text', text: p.text });
        break;
      case 'image':
        content.push({ type: 'image_url', image_url: { url: p.url ?? `data:${p.mediaType ?? 'image/png'};base64,${p.data ?? ''}` } });
        break;
      case 'file':
        if (p.mediaType.startsWith('text/')) content.push({ type: 'text', text: Buffer.from(p.data, 'base64').toString('utf8') });
        else content.push({ type: 'file', file: { filename: p.filename ?? 'document.pdf', file_data: `data:${p.mediaType};base64,${p.data}` } });
        break;
      default:
        break;
    }
  }
  if (!content.length) return;
  const onlyText = content.length === 1 && content[0].type === 'text';
  out.push({ role: 'user', content: onlyText ? (content[0] as { text: string }).text : content });
}

function assistantMessage(parts: HubPart[]): OpenAIMessage {
  let text = '';
  const calls: NonNullable<OpenAIMessage['tool_calls']> = [];
  for (const p of parts) {
    if (p.type === 'text') text += p.text;
    else if (p.type === 'tool_call') calls.push({ id: p.id, type: 'function', function: { name: p.name, arguments: p.arguments } });
    // Reasoning is not sent back: Chat Completions has no field for earlier reasoning.
  }
  const msg: OpenAIMessage = { role: 'assistant', content: text || (calls.length ? null : '') };
  if (calls.length) msg.tool_calls = calls;
  return msg;
}

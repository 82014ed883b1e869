import { errors } from '../../http/errors.js';
import type { HubMessage, HubPart, HubRequest, HubResponseFormat, HubTool, HubToolChoice } from '../hub/types.js';
import { appendTurn, clientArgs, effortOf, nameToolResults, parseDataUrl } from '../hub/util.js';

// OpenAI Responses requests ↔ the hub. The client side gets `input` already expanded: stored
// state (previous_response_id, item_reference) is resolved by the route before decoding.

type Json = Record<string, any>;

const EFFORTS = new Set(['minimal', 'low', 'medium', 'high']);

export function decodeResponsesRequest(body: Json): HubRequest {
  const system: string[] = [];
  if (typeof body.instructions === 'string' && body.instructions) system.push(body.instructions);
  const messages: HubMessage[] = [];
  const input: unknown = body.input;
  if (typeof input === 'string') {
    appendTurn(messages, 'user', [{ type: 'text', text: input }]);
  } else if (Array.isArray(input)) {
    input.forEach((item, i) => decodeItem(item as Json, `input[${i}]`, system, messages));
  }
  nameToolResults(messages);
  const out: HubRequest = { model: String(body.model), system, messages, tools: [], stop: [], stream: body.stream === true };
  if (typeof body.max_output_tokens === 'number') out.maxTokens = body.max_output_tokens;
  if (typeof body.temperature === 'number') out.temperature = body.temperature;
  if (typeof body.top_p === 'number') out.topP = body.top_p;
  if (typeof body.user === 'string' && body.user) out.user = body.user;
  if (Array.isArray(body.tools) && body.tools.length) out.tools = (body.tools as Json[]).map(toolOf);
  const choice = toolChoiceOf(body.tool_choice);
  if (choice) out.toolChoice = choice;
  if (body.parallel_tool_calls === false) out.parallelToolCalls = false;
  const format = formatOf(body.text?.format);
  if (format) out.responseFormat = format;
  const effort = body.reasoning?.effort;
  if (effort != null) {
    if (effort === 'none') out.reasoning = { enabled: false };
    else if (typeof effort === 'string' && EFFORTS.has(effort)) out.reasoning = { effort: effort as 'low' };
    else throw errors.invalidRequest('reasoning.effort must be "none", "minimal", "low", "medium" or "high".', 'reasoning.effort');
  }
  return out;
}

function decodeItem(item: Json, where: string, system: string[], messages: HubMessage[]): void {
  if (!item || typeof item !== 'object') throw errors.invalidRequest(`${where} must be an object.`, where);
  const type = item.type ?? (item.role ? 'message' : undefined);
  switch (type) {
    case 'message': {
      const role = item.role;
      if (role === 'system' || role === 'developer') {
        const text = contentText(item.content, where);
        if (text) system.push(text);
        return;
      }
      if (role === 'user') return appendTurn(messages, 'user', userParts(item.content, where));
      if (role === 'assistant') {
        const text = contentText(item.content, where);
        return appendTurn(messages, 'assistant', text ? [{ type: 'text', text }] : []);
      }
      throw errors.invalidRequest(`${where}.role must be "user", "assistant", "system" or "developer".`, `${where}.role`);
    }
    case 'function_call':
      if (typeof item.call_id !== 'string' || typeof item.name !== 'string') throw errors.invalidRequest(`${where}: a function_call needs call_id and name.`, where);
      return appendTurn(messages, 'assistant', [{ type: 'tool_call', id: item.call_id, name: item.name, arguments: clientArgs(item.arguments, `${where}.arguments`) }]);
    case 'function_call_output': {
      if (typeof item.call_id !== 'string') throw errors.invalidRequest(`${where}.call_id is required.`, `${where}.call_id`);
      const output = typeof item.output === 'string' ? item.output : contentText(item.output, `${where}.output`);
      return appendTurn(messages, 'user', [{ type: 'tool_result', callId: item.call_id, content: output }]);
    }
    case 'reasoning': {
      const text = Array.isArray(item.summary) ? (item.summary as Json[]).map((s) => (typeof s?.text === 'string' ? s.text : '')).join('') : '';
      return appendTurn(messages, 'assistant', text ? [{ type: 'reasoning', text }] : []);
    }
    case 'item_reference':
      throw errors.invalidRequest(`${where}: no stored item "${String(item.id)}" for this key.`, where);
    default:
      throw errors.invalidRequest(`${where}: input items of type "${String(type)}" are not supported for this model.`, `${where}.type`);
  }
}

/** The text of a message's content: a string, or its text parts (input, output and refusal). */
function contentText(content: unknown, where: string): string {
  if (content == null) return '';
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw errors.invalidRequest(`${where}.content must be a string or a list of parts.`, `${where}.content`);
  return content
    .map((p: Json, j) => {
      if (p?.type === 'input_text' || p?.type === 'output_text' || p?.type === 'text') return String(p.text ?? '');
      if (p?.type === 'refusal') return String(p.refusal ?? '');
      throw errors.invalidRequest(`${where}.content[${j}] must be a text part here.`, `${where}.content[${j}]`);
    })
    .join('');
}

function userParts(content: unknown, where: string): HubPart[] {
  if (typeof content === 'string') return content ? [{ type: 'text', text: content }] : [];
  if (!Array.isArray(content)) throw errors.invalidRequest(`${where}.content must be a string or a list of parts.`, `${where}.content`);
  const parts: HubPart[] = [];
  content.forEach((p: Json, j) => {
    const at = `${where}.content[${j}]`;
    switch (p?.type) {
      case 'input_text':
        if (p.text) parts.push({ type: 'text', text: String(p.text) });
        break;
      case 'input_image': {
        if (typeof p.image_url !== 'string' || !p.image_url) throw errors.invalidRequest(`${at}: only images given by image_url can be passed to this model.`, at);
        const d = parseDataUrl(p.image_url);
        parts.push(d ? { type: 'image', data: d.data, mediaType: d.mediaType } : { type: 'image', url: p.image_url });
        break;
      }
      case 'input_file': {
        const d = typeof p.file_data === 'string' ? parseDataUrl(p.file_data) : null;
        if (!d) throw errors.invalidRequest(`${at}: only files sent inline as file_data (a base64 data: URL) can be passed to this model.`, at);
        parts.push({ type: 'file', data: d.data, mediaType: d.mediaType, ...(typeof p.filename === 'string' ? { filename: p.filename } : {}) });
        break;
      }
      default:
        throw errors.invalidRequest(`${at}: content parts of type "${String(p?.type)}" are not supported for this model.`, at);
    }
  });
  return parts;
}

function toolOf(t: Json, i: number): HubTool {
  if (t?.type !== 'function' || typeof t.name !== 'string' || !t.name) {
    throw errors.invalidRequest(`tools[${i}]: only function tools with a name are supported for this model.`, `tools[${i}]`);
  }
  const tool: HubTool = { name: t.name, parameters: t.parameters ?? { type: 'object', properties: {} } };
  if (typeof t.description === 'string' && t.description) tool.description = t.description;
  if (typeof t.strict === 'boolean') tool.strict = t.strict;
  return tool;
}

function toolChoiceOf(c: unknown): HubToolChoice | undefined {
  if (c == null) return undefined;
  if (c === 'none' || c === 'auto' || c === 'required') return c;
  const o = c as Json;
  if (o?.type === 'function' && typeof o.name === 'string' && o.name) return { name: o.name };
  throw errors.invalidRequest('tool_choice must be "none", "auto", "required" or {"type":"function","name":…}.', 'tool_choice');
}

function formatOf(f: Json | undefined): HubResponseFormat | undefined {
  if (f == null) return undefined;
  if (f.type === 'text') return { type: 'text' };
  if (f.type === 'json_object') return { type: 'json_object' };
  if (f.type === 'json_schema' && f.schema && typeof f.schema === 'object') {
    const out: HubResponseFormat = { type: 'json_schema', name: typeof f.name === 'string' ? f.name : 'response', schema: f.schema };
    if (typeof f.strict === 'boolean') out.strict = f.strict;
    if (typeof f.description === 'string') out.description = f.description;
    return out;
  }
  throw errors.invalidRequest('text.format must be {"type":"text"}, {"type":"json_object"} or {"type":"json_schema","name","schema"}.', 'text.format');
}

// ---- hub → a Responses upstream ----

export function encodeResponsesRequest(r: HubRequest, upstreamModel: string): Json {
  const input: Json[] = [];
  for (const m of r.messages) {
    if (m.role === 'user') {
      const content: Json[] = [];
      for (const p of m.parts) {
        if (p.type === 'tool_result') input.push({ type: 'function_call_output', call_id: p.callId, output: p.content });
        else if (p.type === 'text') content.push({ type: 'input_text', text: p.text });
        else if (p.type === 'image') content.push({ type: 'input_image', image_url: p.url ?? `data:${p.mediaType ?? 'image/png'};base64,${p.data ?? ''}` });
        else if (p.type === 'file') content.push({ type: 'input_file', filename: p.filename ?? 'document.pdf', file_data: `data:${p.mediaType};base64,${p.data}` });
      }
      if (content.length) input.push({ type: 'message', role: 'user', content });
      continue;
    }
    for (const p of m.parts) {
      if (p.type === 'text') input.push({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: p.text }] });
      else if (p.type === 'tool_call') input.push({ type: 'function_call', call_id: p.id, name: p.name, arguments: p.arguments });
      // Earlier reasoning goes back only as OpenAI's encrypted items, which other formats lack.
    }
  }
  // The gateway keeps no upstream state: every call carries its whole conversation.
  const out: Json = { model: upstreamModel, input, store: false };
  if (r.system.length) out.instructions = r.system.join('\n\n');
  if (r.maxTokens != null) out.max_output_tokens = r.maxTokens;
  if (r.stream) out.stream = true;
  if (r.temperature != null) out.temperature = r.temperature;
  if (r.topP != null) out.top_p = r.topP;
  if (r.user) out.user = r.user;
  if (r.tools.length) {
    out.tools = r.tools.map((t) => ({ type: 'function', name: t.name, parameters: t.parameters, strict: t.strict ?? false, ...(t.description ? { description: t.description } : {}) }));
    if (r.parallelToolCalls === false) out.parallel_tool_calls = false;
  }
  if (r.toolChoice) out.tool_choice = typeof r.toolChoice === 'string' ? r.toolChoice : { type: 'function', name: r.toolChoice.name };
  const f = r.responseFormat;
  if (f?.type === 'json_object') out.text = { format: { type: 'json_object' } };
  else if (f?.type === 'json_schema') out.text = { format: { type: 'json_schema', name: f.name, schema: f.schema, ...(f.strict != null ? { strict: f.strict } : {}), ...(f.description ? { description: f.description } : {}) } };
  if (r.reasoning) out.reasoning = { effort: r.reasoning.enabled === false ? 'none' : effortOf(r.reasoning), summary: 'auto' };
  return out;
}

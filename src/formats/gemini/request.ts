import { errors } from '../../http/errors.js';
import { readJsonField } from '../../http/json-field.js';
import type { HubMessage, HubPart, HubReasoning, HubRequest, HubTool, HubToolChoice } from '../hub/types.js';
import { appendTurn, argsObject, budgetOf, localId, nameToolResults } from '../hub/util.js';
import { functionResponseText } from '../../wire/gemini-chat.js';

// Gemini generateContent requests ↔ the hub. The model is named in the URL; the route copies it
// into `model` before decoding.

type Json = Record<string, any>;

export function decodeGeminiRequest(body: Json): HubRequest {
  const system: string[] = [];
  const si = body.systemInstruction ?? body.system_instruction;
  if (typeof si === 'string') {
    if (si) system.push(si);
  } else if (si && Array.isArray(si.parts)) {
    const text = (si.parts as Json[]).map((p) => (typeof p?.text === 'string' ? p.text : '')).join('');
    if (text) system.push(text);
  }
  const messages: HubMessage[] = [];
  /** Calls without an id (Gemini's usual case) get one; their results are matched by name, in order. */
  const pending = new Map<string, string[]>();
  (body.contents as Json[]).forEach((c, i) => {
    const where = `contents[${i}]`;
    const role = c?.role ?? 'user';
    if (role !== 'user' && role !== 'model' && role !== 'function') throw errors.invalidRequest(`${where}.role must be "user" or "model".`, `${where}.role`);
    const parts: HubPart[] = [];
    ((c?.parts ?? []) as Json[]).forEach((p, j) => {
      const part = partOf(p, `${where}.parts[${j}]`, role === 'model', pending);
      if (part) parts.push(part);
    });
    appendTurn(messages, role === 'model' ? 'assistant' : 'user', parts);
  });
  nameToolResults(messages);
  const out: HubRequest = { model: String(body.model), system, messages, tools: [], stop: [], stream: body.stream === true };
  const g: Json = body.generationConfig ?? body.generation_config ?? {};
  if (g.candidateCount != null && g.candidateCount > 1) throw errors.invalidRequest("generationConfig.candidateCount > 1 is not supported by this model's provider.", 'generationConfig.candidateCount');
  if (typeof g.maxOutputTokens === 'number') out.maxTokens = g.maxOutputTokens;
  if (typeof g.temperature === 'number') out.temperature = g.temperature;
  if (typeof g.topP === 'number') out.topP = g.topP;
  if (typeof g.topK === 'number') out.topK = g.topK;
  if (Array.isArray(g.stopSequences)) out.stop = g.stopSequences.filter((s: unknown) => typeof s === 'string' && s);
  const schema = g.responseJsonSchema ?? g.responseSchema ?? g.response_json_schema ?? g.response_schema;
  if (schema && typeof schema === 'object') out.responseFormat = { type: 'json_schema', name: 'response', schema: normaliseSchema(schema) };
  else if (g.responseMimeType === 'application/json') out.responseFormat = { type: 'json_object' };
  else if (g.responseMimeType && g.responseMimeType !== 'text/plain') {
    throw errors.invalidRequest(`generationConfig.responseMimeType "${String(g.responseMimeType)}" is not supported; use "text/plain" or "application/json".`, 'generationConfig.responseMimeType');
  }
  const reasoning = reasoningOf(g.thinkingConfig);
  if (reasoning) out.reasoning = reasoning;
  for (const [i, t] of ((body.tools ?? []) as Json[]).entries()) {
    const decls = t?.functionDeclarations ?? t?.function_declarations;
    if (!Array.isArray(decls)) {
      throw errors.invalidRequest(`tools[${i}]: only functionDeclarations are supported for this model (Google's built-in tools run only on Gemini).`, `tools[${i}]`);
    }
    for (const d of decls as Json[]) out.tools.push(toolOf(d, i));
  }
  const choice = toolChoiceOf(body.toolConfig?.functionCallingConfig ?? body.tool_config?.function_calling_config);
  if (choice) out.toolChoice = choice;
  return out;
}

/** Gemini's OpenAPI-style schemas name types in capitals (STRING, OBJECT); JSON Schema in lower case. */
export function normaliseSchema(s: unknown): Record<string, unknown> {
  if (Array.isArray(s)) return s.map(normaliseSchema) as unknown as Record<string, unknown>;
  if (!s || typeof s !== 'object') return s as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(s)) {
    if (k === 'type' && typeof v === 'string') out[k] = v.toLowerCase();
    else if (k === 'properties' && v && typeof v === 'object') out[k] = Object.fromEntries(Object.entries(v).map(([pk, pv]) => [pk, normaliseSchema(pv)]));
    else if (typeof v === 'object' && v !== null) out[k] = normaliseSchema(v);
    else out[k] = v;
  }
  return out;
}

function reasoningOf(t: Json | undefined): HubReasoning | undefined {
  if (!t || typeof t !== 'object') return undefined;
  if (t.thinkingBudget === 0) return { enabled: false };
  if (typeof t.thinkingBudget === 'number' && t.thinkingBudget > 0) return { budgetTokens: t.thinkingBudget };
  const level = String(t.thinkingLevel ?? '').toLowerCase();
  if (level === 'low' || level === 'medium' || level === 'high' || level === 'minimal') return { effort: level };
  if (t.includeThoughts === true) return { effort: 'medium' };
  return undefined;
}

function partOf(p: Json, where: string, fromModel: boolean, pending: Map<string, string[]>): HubPart | null {
  if (typeof p?.text === 'string') {
    if (p.thought === true) return fromModel && p.text ? { type: 'reasoning', text: p.text } : null;
    return p.text ? { type: 'text', text: p.text } : null;
  }
  const inline = p?.inlineData ?? p?.inline_data;
  if (inline) {
    const mime = String(inline.mimeType ?? inline.mime_type ?? '');
    if (typeof inline.data !== 'string' || !mime) throw errors.invalidRequest(`${where}.inlineData needs mimeType and data.`, where);
    return mime.startsWith('image/') ? { type: 'image', data: inline.data, mediaType: mime } : { type: 'file', data: inline.data, mediaType: mime };
  }
  const file = p?.fileData ?? p?.file_data;
  if (file) {
    const mime = String(file.mimeType ?? file.mime_type ?? '');
    const uri = file.fileUri ?? file.file_uri;
    if (mime.startsWith('image/') && typeof uri === 'string' && /^https?:/.test(uri)) return { type: 'image', url: uri, mediaType: mime };
    throw errors.invalidRequest(`${where}: only images by https URL can be passed as fileData to this model.`, where);
  }
  const call = p?.functionCall ?? p?.function_call;
  if (call) {
    if (typeof call.name !== 'string') throw errors.invalidRequest(`${where}.functionCall.name is required.`, where);
    const id = typeof call.id === 'string' && call.id ? call.id : localId('call_');
    const queue = pending.get(call.name) ?? [];
    queue.push(id);
    pending.set(call.name, queue);
    return { type: 'tool_call', id, name: call.name, arguments: JSON.stringify(call.args ?? {}) };
  }
  const res = p?.functionResponse ?? p?.function_response;
  if (res) {
    if (typeof res.name !== 'string') throw errors.invalidRequest(`${where}.functionResponse.name is required.`, where);
    const queue = pending.get(res.name) ?? [];
    const id = typeof res.id === 'string' && res.id ? res.id : (queue.shift() ?? localId('call_'));
    if (typeof res.id === 'string') {
      const at = queue.indexOf(res.id);
      if (at >= 0) queue.splice(at, 1);
    }
    return { type: 'tool_result', callId: id, name: res.name, content: functionResponseText(res.response, res.name) };
  }
  throw errors.invalidRequest(`${where}: this kind of part is not supported for this model (text, inlineData, fileData, functionCall, functionResponse are).`, where);
}

function toolOf(d: Json, i: number): HubTool {
  if (typeof d?.name !== 'string' || !d.name) throw errors.invalidRequest(`tools[${i}].functionDeclarations: every declaration needs a name.`, `tools[${i}]`);
  const params = d.parametersJsonSchema ?? d.parameters_json_schema ?? d.parameters;
  const tool: HubTool = { name: d.name, parameters: params ? normaliseSchema(params) : { type: 'object', properties: {} } };
  if (typeof d.description === 'string' && d.description) tool.description = d.description;
  return tool;
}

function toolChoiceOf(c: Json | undefined): HubToolChoice | undefined {
  if (!c) return undefined;
  const mode = String(c.mode ?? 'AUTO').toUpperCase();
  const allowed = c.allowedFunctionNames ?? c.allowed_function_names;
  if (mode === 'NONE') return 'none';
  if (mode === 'ANY' || mode === 'VALIDATED') {
    if (Array.isArray(allowed) && allowed.length === 1) return { name: String(allowed[0]) };
    return 'required';
  }
  return 'auto';
}

// ---- hub → a Gemini upstream ----

export function encodeGeminiRequest(r: HubRequest): Json {
  const contents: Json[] = [];
  for (const m of r.messages) {
    const parts = m.parts.map(partOut).filter((p): p is Json => p !== null);
    if (!parts.length) continue;
    contents.push({ role: m.role === 'assistant' ? 'model' : 'user', parts });
  }
  const out: Json = { contents };
  if (r.system.length) out.systemInstruction = { parts: [{ text: r.system.join('\n\n') }] };
  const g: Json = {};
  if (r.maxTokens != null) g.maxOutputTokens = r.maxTokens;
  if (r.temperature != null) g.temperature = r.temperature;
  if (r.topP != null) g.topP = r.topP;
  if (r.topK != null) g.topK = r.topK;
  if (r.stop.length) g.stopSequences = r.stop.slice(0, 5);
  if (r.responseFormat?.type === 'json_object') g.responseMimeType = 'application/json';
  else if (r.responseFormat?.type === 'json_schema') {
    g.responseMimeType = 'application/json';
    g.responseJsonSchema = r.responseFormat.schema;
  }
  if (r.reasoning) g.thinkingConfig = r.reasoning.enabled === false ? { thinkingBudget: 0 } : { thinkingBudget: budgetOf(r.reasoning), includeThoughts: true };
  if (Object.keys(g).length) out.generationConfig = g;
  if (r.tools.length) {
    out.tools = [{ functionDeclarations: r.tools.map((t) => ({ name: t.name, parametersJsonSchema: t.parameters, ...(t.description ? { description: t.description } : {}) })) }];
  }
  if (r.toolChoice) {
    const c = r.toolChoice;
    out.toolConfig = { functionCallingConfig: c === 'none' ? { mode: 'NONE' } : c === 'auto' ? { mode: 'AUTO' } : c === 'required' ? { mode: 'ANY' } : { mode: 'ANY', allowedFunctionNames: [c.name] } };
  }
  return out;
}

function partOut(p: HubPart): Json | null {
  switch (p.type) {
    case 'text':
      return p.text ? { text: p.text } : null;
    case 'image':
      if (p.url && !p.url.startsWith('data:')) return { fileData: { mimeType: p.mediaType ?? 'image/jpeg', fileUri: p.url } };
      return { inlineData: { mimeType: p.mediaType ?? 'image/png', data: p.data ?? '' } };
    case 'file':
      return { inlineData: { mimeType: p.mediaType, data: p.data } };
    case 'tool_call':
      return { functionCall: { id: p.id, name: p.name, args: argsObject(p.arguments) } };
    case 'tool_result':
      return { functionResponse: { id: p.callId, name: p.name ?? p.callId, response: resultObject(p.content) } };
    default:
      // Earlier thinking goes back to Gemini only with its thought signature, which other formats lack.
      return null;
  }
}

/**
 * Gemini wants a tool result as an object: JSON objects as they are, anything else wrapped (JSON
 * past the body limits too: as text it is only a string).
 */
function resultObject(content: string): Json {
  const parsed = readJsonField(content);
  const v = parsed.ok ? parsed.value : null;
  if (v && typeof v === 'object' && !Array.isArray(v)) return v as Json;
  return { result: content };
}

import { errors } from '../../http/errors.js';
import type { HubMessage, HubPart, HubReasoning, HubRequest, HubTool, HubToolChoice } from '../hub/types.js';
import { appendTurn, argsObject, budgetOf, nameToolResults } from '../hub/util.js';
import type { AnthropicBlock, AnthropicMessageParam, AnthropicRequest, AnthropicTextBlock, AnthropicTool, AnthropicToolChoice } from './types.js';

// Anthropic Messages requests ↔ the hub.

/**
 * Anthropic requires max_tokens; other clients may omit it. 4096 is the largest output every
 * current Claude model accepts (the smallest model ceiling), so it is never rejected as too large.
 */
export const DEFAULT_ANTHROPIC_MAX_TOKENS = 4096;

/** The tool that stands in for JSON mode, which Anthropic has no switch for (docs/chat.md). */
export const JSON_TOOL = 'json_response';

const EFFORTS = new Set(['low', 'medium', 'high']);

export function decodeAnthropicRequest(req: AnthropicRequest): HubRequest {
  const system: string[] = [];
  if (typeof req.system === 'string') {
    if (req.system) system.push(req.system);
  } else if (Array.isArray(req.system)) {
    for (const b of req.system) if (b.text) system.push(b.text);
  }
  const messages: HubMessage[] = [];
  req.messages.forEach((m, i) => {
    if (m.role !== 'user' && m.role !== 'assistant') throw errors.invalidRequest(`messages[${i}].role must be "user" or "assistant".`, `messages[${i}].role`);
    const blocks: AnthropicBlock[] = typeof m.content === 'string' ? (m.content ? [{ type: 'text', text: m.content }] : []) : m.content;
    const parts: HubPart[] = [];
    blocks.forEach((b, j) => {
      const p = partOf(b, `messages[${i}].content[${j}]`);
      if (p) parts.push(p);
    });
    appendTurn(messages, m.role, parts);
  });
  nameToolResults(messages);
  const out: HubRequest = { model: req.model, system, messages, tools: [], stop: req.stop_sequences ?? [], stream: req.stream === true, maxTokens: req.max_tokens };
  if (req.temperature != null) out.temperature = req.temperature;
  if (req.top_p != null) out.topP = req.top_p;
  if (req.top_k != null) out.topK = req.top_k;
  if (req.metadata?.user_id) out.user = req.metadata.user_id;
  if (req.tools?.length) out.tools = req.tools.map(toolOf);
  if (req.tool_choice) {
    out.toolChoice = toolChoiceOf(req.tool_choice);
    if ('disable_parallel_tool_use' in req.tool_choice && req.tool_choice.disable_parallel_tool_use) out.parallelToolCalls = false;
  }
  const reasoning = reasoningOf(req);
  if (reasoning) out.reasoning = reasoning;
  // Structured output: output_config.format (GA) or output_format (the beta's name).
  const format = ((req.output_config as { format?: unknown } | undefined)?.format ?? req.output_format) as { type?: unknown; schema?: unknown } | undefined | null;
  if (format) {
    if (format.type !== 'json_schema' || !format.schema || typeof format.schema !== 'object') {
      throw errors.invalidRequest('output_config.format must be {"type":"json_schema","schema":{…}}.', 'output_config.format');
    }
    out.responseFormat = { type: 'json_schema', name: 'response', schema: format.schema as Record<string, unknown>, strict: true };
  }
  return out;
}

function reasoningOf(req: AnthropicRequest): HubReasoning | undefined {
  const t = req.thinking as { type?: unknown; budget_tokens?: unknown } | undefined;
  const effort = (req.output_config as { effort?: unknown } | undefined)?.effort;
  if (t?.type === 'disabled') return { enabled: false };
  if (t?.type === 'enabled') {
    if (typeof t.budget_tokens !== 'number') throw errors.invalidRequest('thinking.budget_tokens is required when thinking is enabled.', 'thinking.budget_tokens');
    return { budgetTokens: t.budget_tokens };
  }
  if (typeof effort === 'string' && EFFORTS.has(effort)) return { effort: effort as 'low' };
  if (t?.type === 'adaptive') return { effort: 'medium' };
  return undefined;
}

function partOf(b: AnthropicBlock, where: string): HubPart | null {
  switch (b.type) {
    case 'text': {
      const text = (b as AnthropicTextBlock).text;
      return text ? { type: 'text', text } : null;
    }
    case 'image': {
      const s = (b as Extract<AnthropicBlock, { type: 'image' }>).source;
      if (s?.type === 'base64') return { type: 'image', data: s.data, mediaType: s.media_type };
      if (s?.type === 'url') return { type: 'image', url: s.url };
      throw errors.invalidRequest(`${where}: only base64 and url image sources are supported for this model.`, where);
    }
    case 'document': {
      const s = (b as Extract<AnthropicBlock, { type: 'document' }>).source;
      if (s?.type === 'text') return { type: 'text', text: s.data };
      if (s?.type === 'base64') return { type: 'file', data: s.data, mediaType: s.media_type };
      throw errors.invalidRequest(`${where}: only base64 and text documents are supported for this model.`, where);
    }
    case 'tool_use': {
      const u = b as Extract<AnthropicBlock, { type: 'tool_use' }>;
      return { type: 'tool_call', id: u.id, name: u.name, arguments: JSON.stringify(u.input ?? {}) };
    }
    case 'tool_result': {
      const r = b as Extract<AnthropicBlock, { type: 'tool_result' }>;
      return { type: 'tool_result', callId: r.tool_use_id, content: toolResultText(r.content), ...(r.is_error ? { isError: true } : {}) };
    }
    case 'thinking': {
      const t = b as { thinking?: unknown; signature?: unknown };
      return typeof t.thinking === 'string' ? { type: 'reasoning', text: t.thinking, ...(typeof t.signature === 'string' ? { signature: t.signature } : {}) } : null;
    }
    case 'redacted_thinking':
      return null;
    default:
      throw errors.invalidRequest(`${where}: content blocks of type "${b.type}" are not supported for this model.`, where);
  }
}

/** Tool results carry text in the hub; images inside a tool result are dropped. */
function toolResultText(content: Extract<AnthropicBlock, { type: 'tool_result' }>['content']): string {
  if (content == null) return '';
  if (typeof content === 'string') return content;
  return content
    .filter((b) => b.type === 'text')
    .map((b) => (b as { text: string }).text)
    .join('\n');
}

function toolOf(t: AnthropicTool, i: number): HubTool {
  if (t.type != null && t.type !== 'custom') {
    throw errors.invalidRequest(`tools[${i}]: the server tool "${t.type}" runs only on Anthropic; this model's channel cannot run it.`, `tools[${i}]`);
  }
  const tool: HubTool = { name: t.name, parameters: t.input_schema ?? { type: 'object', properties: {} } };
  if (t.description) tool.description = t.description;
  return tool;
}

function toolChoiceOf(c: AnthropicToolChoice): HubToolChoice {
  switch (c.type) {
    case 'none':
      return 'none';
    case 'any':
      return 'required';
    case 'tool':
      if (!c.name) throw errors.invalidRequest('tool_choice.name is required when tool_choice.type is "tool".', 'tool_choice');
      return { name: c.name };
    default:
      return 'auto';
  }
}

// ---- hub → an Anthropic upstream ----

export function encodeAnthropicRequest(r: HubRequest, upstreamModel: string): AnthropicRequest {
  const messages: AnthropicMessageParam[] = [];
  for (const m of r.messages) {
    const blocks = m.parts.map(blockOf).filter((b): b is AnthropicBlock => b !== null);
    if (!blocks.length) continue; // Anthropic rejects empty messages
    const last = messages[messages.length - 1];
    if (last && last.role === m.role) (last.content as AnthropicBlock[]).push(...blocks);
    else messages.push({ role: m.role, content: blocks });
  }
  // A lone text block is sent as a plain string, as clients usually do.
  for (const m of messages) {
    const c = m.content as AnthropicBlock[];
    if (c.length === 1 && c[0].type === 'text') m.content = (c[0] as AnthropicTextBlock).text;
  }
  const out: AnthropicRequest = { model: upstreamModel, messages, max_tokens: r.maxTokens ?? DEFAULT_ANTHROPIC_MAX_TOKENS };
  if (r.system.length === 1) out.system = r.system[0];
  else if (r.system.length > 1) out.system = r.system.map((text) => ({ type: 'text' as const, text }));
  if (r.stream) out.stream = true;
  // Other formats allow 0–2, Anthropic 0–1: higher values mean "as random as it gets".
  if (r.temperature != null) out.temperature = Math.min(1, r.temperature);
  if (r.topP != null) out.top_p = r.topP;
  if (r.topK != null) out.top_k = r.topK;
  if (r.stop.length) out.stop_sequences = r.stop;
  if (r.user) out.metadata = { user_id: r.user };
  const tools: AnthropicTool[] = r.tools.map((t) => ({ name: t.name, input_schema: t.parameters, ...(t.description ? { description: t.description } : {}) }));
  let choice: AnthropicToolChoice | undefined = toolChoiceOut(r.toolChoice, r.parallelToolCalls === false);
  if (r.responseFormat?.type === 'json_object') {
    // No JSON mode in Anthropic: a forced tool whose input becomes the answer's text.
    tools.push({ name: JSON_TOOL, description: 'Respond with a JSON object.', input_schema: { type: 'object' } });
    choice = { type: 'tool', name: JSON_TOOL };
  } else if (r.responseFormat?.type === 'json_schema') {
    out.output_config = { format: { type: 'json_schema', schema: r.responseFormat.schema } };
  }
  if (tools.length) out.tools = tools;
  if (choice && (tools.length || choice.type === 'none')) out.tool_choice = choice;
  const thinking = thinkingOf(r, out.max_tokens, choice);
  if (thinking) {
    out.thinking = thinking;
    // Anthropic allows no temperature other than 1 while thinking.
    delete out.temperature;
    delete out.top_k;
  }
  return out;
}

/**
 * A thinking budget within max_tokens (which counts thinking too); none when the budget would be
 * under Anthropic's minimum of 1024, or when a tool is forced (Anthropic refuses forced tool use
 * while thinking).
 */
function thinkingOf(r: HubRequest, maxTokens: number, choice: AnthropicToolChoice | undefined): Record<string, unknown> | undefined {
  if (!r.reasoning) return undefined;
  if (r.reasoning.enabled === false) return { type: 'disabled' };
  if (choice?.type === 'any' || choice?.type === 'tool') return undefined;
  const budget = Math.min(budgetOf(r.reasoning), maxTokens - 1);
  return budget >= 1024 ? { type: 'enabled', budget_tokens: budget } : undefined;
}

function toolChoiceOut(c: HubToolChoice | undefined, serial: boolean): AnthropicToolChoice | undefined {
  const extra = serial ? { disable_parallel_tool_use: true } : {};
  if (c === undefined) return serial ? { type: 'auto', ...extra } : undefined;
  if (c === 'none') return { type: 'none' };
  if (c === 'auto') return { type: 'auto', ...extra };
  if (c === 'required') return { type: 'any', ...extra };
  return { type: 'tool', name: c.name, ...extra };
}

function blockOf(p: HubPart): AnthropicBlock | null {
  switch (p.type) {
    case 'text':
      return p.text ? { type: 'text', text: p.text } : null;
    case 'image':
      if (p.url && !p.url.startsWith('data:')) return { type: 'image', source: { type: 'url', url: p.url } };
      return { type: 'image', source: { type: 'base64', media_type: p.mediaType ?? 'image/png', data: p.data ?? '' } };
    case 'file':
      if (p.mediaType.startsWith('text/')) return { type: 'document', source: { type: 'text', media_type: 'text/plain', data: Buffer.from(p.data, 'base64').toString('utf8') } };
      return { type: 'document', source: { type: 'base64', media_type: p.mediaType, data: p.data } };
    case 'tool_call':
      return { type: 'tool_use', id: p.id, name: p.name, input: argsObject(p.arguments) };
    case 'tool_result':
      return { type: 'tool_result', tool_use_id: p.callId, content: p.content, ...(p.isError ? { is_error: true } : {}) };
    case 'reasoning':
      // Anthropic accepts earlier thinking only with the signature it issued.
      return p.signature ? { type: 'thinking', thinking: p.text, signature: p.signature } : null;
    default:
      return null;
  }
}

import { answer, newReading, nextId, readUserTurn, sendTruncatedJson, streamFrames, textOf, type SimAnswer, type SimConversation } from './chat-engine.js';
import { readJson, sendJson, type SimContext, type SimRoute } from './router.js';
import { openaiError } from './shapes.js';
import { outputCapProblem } from './tokens.js';

// POST /v1/responses in OpenAI's Responses wire format: a `response` object, or its typed event
// stream (response.created … response.completed). The simulator keeps no state: a
// previous_response_id or an item_reference is refused, as the gateway resolves both itself.

type Json = Record<string, any>;

function bad(ctx: SimContext, message: string, param: string | null = null): void {
  sendJson(ctx.res, 400, { error: { message, type: 'invalid_request_error', param, code: null } });
}

/** Text of a message's content: a string, or its input_text / output_text parts. */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((p: Json) => p && (p.type === 'input_text' || p.type === 'output_text') && typeof p.text === 'string')
    .map((p: Json) => p.text)
    .join(' ');
}

/** Checks what OpenAI checks and reduces the request. */
function conversation(body: Json): SimConversation | string {
  if (typeof body.model !== 'string' || !body.model) return "Missing required parameter: 'model'.";
  if (body.previous_response_id != null) return 'Previous response with id not found (the simulator keeps no responses).';
  const read = newReading();
  if (typeof body.instructions === 'string') read.texts.push(body.instructions);
  const calls = new Set<string>();
  const items: Json[] = typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : Array.isArray(body.input) ? body.input : [];
  if (!items.length) return "Missing required parameter: 'input'.";
  for (const [i, item] of items.entries()) {
    const type = item?.type ?? (item?.role ? 'message' : undefined);
    if (type === 'message') {
      if (!['user', 'assistant', 'system', 'developer'].includes(item.role)) return `Invalid value for 'input[${i}].role'.`;
      if (Array.isArray(item.content)) read.images += item.content.filter((p: Json) => p?.type === 'input_image').length;
      const t = contentText(item.content);
      read.texts.push(t);
      if (item.role === 'user') readUserTurn(read, t);
    } else if (type === 'function_call') {
      if (typeof item.call_id !== 'string' || typeof item.name !== 'string') return `Missing required parameter: 'input[${i}].call_id'.`;
      calls.add(item.call_id);
      read.texts.push(item.name, String(item.arguments ?? ''));
    } else if (type === 'function_call_output') {
      if (!calls.has(item.call_id)) return `No tool call found for function call output with call_id ${String(item.call_id)}.`;
      read.toolResult = typeof item.output === 'string' ? item.output : contentText(item.output);
      read.texts.push(read.toolResult);
    } else if (type === 'reasoning') {
      read.texts.push(textOf((item.summary ?? []).map((s: Json) => ({ type: 'text', text: s?.text }))));
    } else if (type === 'item_reference') {
      return `Item with id '${String(item.id)}' not found (the simulator keeps no items).`;
    } else {
      return `Invalid value for 'input[${i}].type'.`;
    }
  }
  for (const [i, t] of ((body.tools ?? []) as Json[]).entries()) {
    if (t?.type !== 'function' || typeof t.name !== 'string' || !t.name) return `Missing required parameter: 'tools[${i}].name'.`;
    read.tools.push({ name: t.name, schema: t.parameters ?? {} });
    read.texts.push(t.name, String(t.description ?? ''));
  }
  const choice = body.tool_choice;
  const format = body.text?.format;
  if (format != null && !['text', 'json_object', 'json_schema'].includes(format.type)) return "Invalid value for 'text.format.type'.";
  if (format?.type === 'json_schema' && (typeof format.name !== 'string' || typeof format.schema !== 'object')) return "Missing required parameter: 'text.format.name'.";
  const effort = body.reasoning?.effort;
  const capProblem = outputCapProblem('max_output_tokens', body.max_output_tokens);
  if (capProblem) return capProblem;
  return {
    ...read,
    forcedTool: choice === 'required' ? 'any' : choice?.type === 'function' ? String(choice.name) : null,
    toolsOff: choice === 'none',
    maxTokens: typeof body.max_output_tokens === 'number' ? body.max_output_tokens : null,
    stop: [],
    json: format?.type === 'json_schema' ? { schema: format.schema } : format?.type === 'json_object' ? { schema: null } : null,
    reasoning: effort != null && effort !== 'none',
  };
}

interface Ids {
  response: string;
  reasoning: string;
  message: string;
  call: string;
  callItem: string;
}

function usageOf(a: SimAnswer): Json {
  const output = (a.tool ? a.tool.argPieces.length : a.pieces.length) + a.thought.length;
  return {
    input_tokens: a.inputTokens,
    input_tokens_details: { cached_tokens: a.cachedTokens },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: a.thought.length },
    total_tokens: a.inputTokens + output,
  };
}

function outputOf(a: SimAnswer, ids: Ids): Json[] {
  const out: Json[] = [];
  // An item cut by max_output_tokens is incomplete, as the response is.
  const status = a.finish === 'length' ? 'incomplete' : 'completed';
  if (a.thought.length) out.push({ id: ids.reasoning, type: 'reasoning', summary: [{ type: 'summary_text', text: a.thought.join('') }] });
  if (a.tool) out.push({ id: ids.callItem, type: 'function_call', status, arguments: a.tool.args, call_id: ids.call, name: a.tool.name });
  else out.push({ id: ids.message, type: 'message', status, role: 'assistant', content: [{ type: 'output_text', text: a.pieces.join(''), annotations: [], logprobs: [] }] });
  return out;
}

function responseOf(body: Json, a: SimAnswer | null, ids: Ids, output: Json[]): Json {
  const incomplete = a?.finish === 'length';
  return {
    id: ids.response,
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    status: a ? (incomplete ? 'incomplete' : 'completed') : 'in_progress',
    error: null,
    incomplete_details: incomplete ? { reason: 'max_output_tokens' } : null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    model: body.model,
    output,
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: null,
    reasoning: { effort: body.reasoning?.effort ?? null, summary: null },
    store: body.store ?? true,
    temperature: body.temperature ?? 1,
    text: body.text ?? { format: { type: 'text' } },
    tool_choice: body.tool_choice ?? 'auto',
    tools: body.tools ?? [],
    top_p: body.top_p ?? 1,
    truncation: 'disabled',
    usage: a ? usageOf(a) : null,
    user: null,
    metadata: {},
  };
}

function* events(body: Json, a: SimAnswer, ids: Ids): Generator<string> {
  let seq = 0;
  const ev = (type: string, payload: Json) => `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...payload })}\n\n`;
  yield ev('response.created', { response: responseOf(body, null, ids, []) });
  yield ev('response.in_progress', { response: responseOf(body, null, ids, []) });
  const output = outputOf(a, ids);
  for (const [index, item] of output.entries()) {
    if (item.type === 'reasoning') {
      yield ev('response.output_item.added', { output_index: index, item: { ...item, summary: [] } });
      yield ev('response.reasoning_summary_part.added', { item_id: item.id, output_index: index, summary_index: 0, part: { type: 'summary_text', text: '' } });
      for (const p of a.thought) yield ev('response.reasoning_summary_text.delta', { item_id: item.id, output_index: index, summary_index: 0, delta: p });
      yield ev('response.reasoning_summary_text.done', { item_id: item.id, output_index: index, summary_index: 0, text: item.summary[0].text });
      yield ev('response.reasoning_summary_part.done', { item_id: item.id, output_index: index, summary_index: 0, part: item.summary[0] });
    } else if (item.type === 'function_call') {
      yield ev('response.output_item.added', { output_index: index, item: { ...item, arguments: '', status: 'in_progress' } });
      for (const p of a.tool!.argPieces) yield ev('response.function_call_arguments.delta', { item_id: item.id, output_index: index, delta: p });
      yield ev('response.function_call_arguments.done', { item_id: item.id, output_index: index, arguments: item.arguments });
    } else {
      const part = item.content[0];
      yield ev('response.output_item.added', { output_index: index, item: { ...item, status: 'in_progress', content: [] } });
      yield ev('response.content_part.added', { item_id: item.id, output_index: index, content_index: 0, part: { ...part, text: '' } });
      for (const p of a.pieces) yield ev('response.output_text.delta', { item_id: item.id, output_index: index, content_index: 0, delta: p, logprobs: [] });
      yield ev('response.output_text.done', { item_id: item.id, output_index: index, content_index: 0, text: part.text, logprobs: [] });
      yield ev('response.content_part.done', { item_id: item.id, output_index: index, content_index: 0, part });
    }
    yield ev('response.output_item.done', { output_index: index, item });
  }
  const final = responseOf(body, a, ids, output);
  yield ev(final.status === 'incomplete' ? 'response.incomplete' : 'response.completed', { response: final });
}

export function openaiResponsesRoutes(): SimRoute[] {
  return [
    {
      name: 'openai.responses',
      method: 'POST',
      pattern: /^\/v1\/responses$/,
      auth: true,
      errorBody: (status, message) => openaiError(message, status === 429 ? 'rate_limit_exceeded' : status >= 500 ? 'server_error' : 'invalid_request', status === 429 ? 'rate_limit_error' : status >= 500 ? 'server_error' : 'invalid_request_error'),
      async handle(ctx) {
        const body = readJson(ctx, (m) => openaiError(m, 'invalid_request', 'invalid_request_error'));
        if (!body) return;
        const conv = conversation(body);
        if (typeof conv === 'string') return bad(ctx, conv);
        const a = answer(conv);
        const ids: Ids = {
          response: nextId(ctx.state, 'resp_sim'),
          reasoning: nextId(ctx.state, 'rs_sim'),
          message: nextId(ctx.state, 'msg_sim'),
          call: nextId(ctx.state, 'call_sim'),
          callItem: nextId(ctx.state, 'fc_sim'),
        };
        if (body.stream === true) return streamFrames(ctx, events(body, a, ids));
        const r = responseOf(body, a, ids, outputOf(a, ids));
        if (ctx.truncate) return sendTruncatedJson(ctx, r);
        sendJson(ctx.res, 200, r);
      },
    },
  ];
}

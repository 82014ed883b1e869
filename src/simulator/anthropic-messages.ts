import { answer, newReading, nextId, readUserTurn, sendTruncatedJson, streamFrames, textOf, toolInput, type SimAnswer, type SimConversation } from './chat-engine.js';
import { readJson, sendJson, type SimContext, type SimRoute } from './router.js';
import { anthropicError } from './shapes.js';
import { outputCapProblem } from './tokens.js';

// POST /v1/messages in Anthropic's wire format: a message, or the event stream message_start,
// content_block_start / ping / content_block_delta (text_delta, input_json_delta) /
// content_block_stop per block, message_delta (stop_reason, usage), message_stop.

type Json = Record<string, any>;

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  529: 'overloaded_error',
};

function errorOf(status: number, message: string): unknown {
  return anthropicError(message, ERROR_TYPES[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error'));
}

function bad(ctx: SimContext, message: string): void {
  sendJson(ctx.res, 400, anthropicError(message, 'invalid_request_error'));
}

/**
 * Checks what Anthropic checks (the gateway's conversions must pass it) and reduces the request.
 * A token count (`counting`) takes the same body without max_tokens.
 */
function conversation(ctx: SimContext, body: Json, counting = false): SimConversation | string {
  if (!ctx.req.headers['anthropic-version']) return 'anthropic-version: header is required';
  if (typeof body.model !== 'string' || !body.model) return 'model: Field required';
  if (!counting) {
    if (body.max_tokens == null) return 'max_tokens: Field required';
    const capProblem = outputCapProblem('max_tokens', body.max_tokens);
    if (capProblem) return capProblem;
  }
  if (!Array.isArray(body.messages) || !body.messages.length) return 'messages: at least one message is required';
  if (body.temperature != null && (typeof body.temperature !== 'number' || body.temperature < 0 || body.temperature > 1)) return 'temperature: Input should be less than or equal to 1';
  const read = newReading();
  if (typeof body.system === 'string') read.texts.push(body.system);
  else if (Array.isArray(body.system)) read.texts.push(textOf(body.system));
  let pendingToolUses: string[] = [];
  for (const [i, m] of (body.messages as Json[]).entries()) {
    if (m?.role !== 'user' && m?.role !== 'assistant') {
      return `messages.${i}.role: Input should be 'user' or 'assistant'`;
    }
    const blocks: Json[] = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : Array.isArray(m.content) ? m.content : [];
    if (!blocks.length) return `messages.${i}: all messages must have non-empty content`;
    for (const b of blocks) if (b?.type === 'text' && (typeof b.text !== 'string' || !b.text)) return `messages.${i}: text content blocks must be non-empty`;
    if (m.role === 'assistant') {
      if (pendingToolUses.length) return `messages.${i}: tool_use ids were found without tool_result blocks immediately after: ${pendingToolUses.join(', ')}`;
      pendingToolUses = blocks.filter((b) => b?.type === 'tool_use').map((b) => String(b.id));
      for (const b of blocks) if (b?.type === 'tool_use') read.texts.push(String(b.name), JSON.stringify(b.input ?? {}));
      read.texts.push(textOf(blocks));
      continue;
    }
    const results = blocks.filter((b) => b?.type === 'tool_result');
    for (const r of results) {
      if (!pendingToolUses.includes(r.tool_use_id)) return `messages.${i}: unexpected tool_use_id found in tool_result blocks: ${String(r.tool_use_id)}`;
    }
    const missing = pendingToolUses.filter((id) => !results.some((r) => r.tool_use_id === id));
    if (missing.length) return `messages.${i}: tool_use ids were found without tool_result blocks immediately after: ${missing.join(', ')}`;
    pendingToolUses = [];
    read.images += blocks.filter((b) => b?.type === 'image').length;
    const said = textOf(blocks);
    const outputs = results.map((r) => textOf(r.content));
    read.texts.push(said, ...(outputs.length ? [outputs.join(' ')] : []));
    readUserTurn(read, said, outputs);
  }
  if (body.messages[body.messages.length - 1]?.role !== 'user') return 'the last message must have the user role (prefill is not simulated)';
  for (const [i, t] of (body.tools ?? []).entries()) {
    if (typeof t?.name !== 'string' || !t.name) return `tools.${i}.name: Field required`;
    if (!t.input_schema || typeof t.input_schema !== 'object') return `tools.${i}.input_schema: Field required`;
    read.tools.push({ name: t.name, schema: t.input_schema });
    read.texts.push(t.name, String(t.description ?? ''));
  }
  const choice = body.tool_choice as Json | undefined;
  const thinking = body.thinking as Json | undefined;
  if (thinking?.type === 'enabled') {
    if (!Number.isInteger(thinking.budget_tokens) || thinking.budget_tokens < 1024) return 'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024';
    if (!counting && thinking.budget_tokens >= body.max_tokens) return '`max_tokens` must be greater than `thinking.budget_tokens`.';
    if (choice?.type === 'any' || choice?.type === 'tool') return 'Thinking may not be enabled when tool_choice forces tool use.';
    if (body.temperature != null && body.temperature !== 1) return '`temperature` may only be set to 1 when thinking is enabled.';
  }
  const format = ((body.output_config as Json | undefined)?.format ?? body.output_format) as Json | undefined;
  if (format != null && (format.type !== 'json_schema' || typeof format.schema !== 'object')) return 'output_config.format: Input should be a valid json_schema format';
  return {
    json: format ? { schema: format.schema } : null,
    reasoning: thinking?.type === 'enabled',
    ...read,
    forcedTool: choice?.type === 'tool' ? String(choice.name) : choice?.type === 'any' ? 'any' : null,
    toolsOff: choice?.type === 'none',
    maxTokens: body.max_tokens,
    stop: Array.isArray(body.stop_sequences) ? body.stop_sequences : [],
  };
}

const STOP: Record<SimAnswer['finish'], string> = { end: 'end_turn', length: 'max_tokens', stop_sequence: 'stop_sequence', tool: 'tool_use' };

function outputTokens(a: SimAnswer): number {
  return a.pieces.length + (a.tool ? a.tool.argPieces.length : 0) + a.thought.length;
}

/** The simulator's stand-in for the signature Anthropic puts on thinking blocks. */
const SIGNATURE = 'c2ltdWxhdG9yLXNpZ25hdHVyZQ==';

function usage(a: SimAnswer, output: number): Json {
  // Anthropic's input_tokens leaves out the cache reads and writes it reports beside it.
  return { input_tokens: a.inputTokens - a.cachedTokens - a.cacheWriteTokens, cache_creation_input_tokens: a.cacheWriteTokens, cache_read_input_tokens: a.cachedTokens, output_tokens: output, service_tier: 'standard' };
}

function message(id: string, model: string, a: SimAnswer, toolId: string): Json {
  const content: Json[] = [];
  if (a.thought.length) content.push({ type: 'thinking', thinking: a.thought.join(''), signature: SIGNATURE });
  if (a.pieces.length) content.push({ type: 'text', text: a.pieces.join('') });
  if (a.tool) content.push({ type: 'tool_use', id: toolId, name: a.tool.name, input: toolInput(a) });
  return { id, type: 'message', role: 'assistant', model, content, stop_reason: STOP[a.finish], stop_sequence: a.stopSequence, usage: usage(a, outputTokens(a)) };
}

function* events(id: string, model: string, a: SimAnswer, toolId: string): Generator<string> {
  const ev = (type: string, body: Json) => `event: ${type}\ndata: ${JSON.stringify({ type, ...body })}\n\n`;
  yield ev('message_start', { message: { id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: usage(a, 1) } });
  let index = 0;
  if (a.thought.length) {
    yield ev('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } });
    for (let i = 0; i < a.thought.length; i += 3) yield ev('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: a.thought.slice(i, i + 3).join('') } });
    yield ev('content_block_delta', { index, delta: { type: 'signature_delta', signature: SIGNATURE } });
    yield ev('content_block_stop', { index });
    index++;
  }
  if (a.pieces.length) {
    yield ev('content_block_start', { index, content_block: { type: 'text', text: '' } });
    yield ev('ping', {});
    // Anthropic sends a few tokens per delta.
    for (let i = 0; i < a.pieces.length; i += 3) yield ev('content_block_delta', { index, delta: { type: 'text_delta', text: a.pieces.slice(i, i + 3).join('') } });
    yield ev('content_block_stop', { index });
    index++;
  }
  if (a.tool) {
    yield ev('content_block_start', { index, content_block: { type: 'tool_use', id: toolId, name: a.tool.name, input: {} } });
    yield ev('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: '' } });
    for (let i = 0; i < a.tool.argPieces.length; i += 3) {
      yield ev('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: a.tool.argPieces.slice(i, i + 3).join('') } });
    }
    yield ev('content_block_stop', { index });
  }
  yield ev('message_delta', { delta: { stop_reason: STOP[a.finish], stop_sequence: a.stopSequence }, usage: { output_tokens: outputTokens(a) } });
  yield ev('message_stop', {});
}

export function anthropicMessagesRoutes(): SimRoute[] {
  return [
    {
      name: 'anthropic.messages',
      method: 'POST',
      pattern: /^\/v1\/messages$/,
      auth: true,
      errorBody: errorOf,
      async handle(ctx) {
        const body = readJson(ctx, (m) => anthropicError(m, 'invalid_request_error'));
        if (!body) return;
        const conv = conversation(ctx, body);
        if (typeof conv === 'string') return bad(ctx, conv);
        const a = answer(conv);
        const id = nextId(ctx.state, 'msg_sim');
        const toolId = nextId(ctx.state, 'toolu_sim');
        const model = body.model as string;
        if (body.stream === true) return streamFrames(ctx, events(id, model, a, toolId));
        const m = message(id, model, a, toolId);
        if (ctx.truncate) return sendTruncatedJson(ctx, m);
        sendJson(ctx.res, 200, m);
      },
    },
    {
      // The input tokens a message with this body would report in its usage.
      name: 'anthropic.count_tokens',
      method: 'POST',
      pattern: /^\/v1\/messages\/count_tokens$/,
      auth: true,
      errorBody: errorOf,
      handle(ctx) {
        const body = readJson(ctx, (m) => anthropicError(m, 'invalid_request_error'));
        if (!body) return;
        const conv = conversation(ctx, body, true);
        if (typeof conv === 'string') return bad(ctx, conv);
        sendJson(ctx.res, 200, { input_tokens: answer(conv).inputTokens });
      },
    },
  ];
}

import { answer, newReading, nextId, readUserTurn, sendTruncatedJson, streamFrames, textOf, type SimAnswer, type SimConversation } from './chat-engine.js';
import { readJson, sendJson, type SimContext, type SimRoute } from './router.js';
import { arkError, openaiError } from './shapes.js';
import { outputCapProblem } from './tokens.js';

// POST /v1/chat/completions in OpenAI's wire format (and Ark's OpenAI-compatible
// POST /api/v3/chat/completions): a chat.completion, or a stream of
// chat.completion.chunk events ending with `data: [DONE]` (plus the usage chunk with empty choices
// when stream_options.include_usage is set).

type Json = Record<string, any>;

const ERROR_TYPES: Record<number, string> = { 400: 'invalid_request_error', 401: 'invalid_request_error', 403: 'permission_error', 404: 'invalid_request_error', 429: 'rate_limit_error' };

function errorOf(status: number, message: string): unknown {
  return openaiError(message, status === 429 ? 'rate_limit_exceeded' : status >= 500 ? 'server_error' : 'invalid_request', ERROR_TYPES[status] ?? (status >= 500 ? 'server_error' : 'invalid_request_error'));
}

function bad(ctx: SimContext, message: string): void {
  sendJson(ctx.res, 400, openaiError(message, 'invalid_request', 'invalid_request_error'));
}

/** Checks what OpenAI checks (the gateway's conversions must pass it) and reduces the request. */
function conversation(body: Json): SimConversation | string {
  if (typeof body.model !== 'string' || !body.model) return 'you must provide a model parameter';
  if (!Array.isArray(body.messages) || !body.messages.length) return "[] is too short - 'messages'";
  if (body.stream_options != null && body.stream !== true) return "The 'stream_options' parameter is only allowed when 'stream' is enabled.";
  if (body.temperature != null && (typeof body.temperature !== 'number' || body.temperature < 0 || body.temperature > 2)) return 'temperature must be between 0 and 2';
  const read = newReading();
  const openCalls = new Set<string>();
  for (const [i, m] of (body.messages as Json[]).entries()) {
    if (!m || !['system', 'developer', 'user', 'assistant', 'tool'].includes(m.role)) return `Invalid value for 'messages[${i}].role'.`;
    if (m.role === 'tool') {
      if (!openCalls.has(m.tool_call_id)) return "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.";
      read.toolResult = textOf(m.content);
      read.texts.push(read.toolResult);
      continue;
    }
    if (m.role === 'assistant') {
      openCalls.clear();
      for (const c of m.tool_calls ?? []) {
        openCalls.add(c?.id);
        read.texts.push(String(c?.function?.name ?? ''), String(c?.function?.arguments ?? ''));
      }
    }
    if (Array.isArray(m.content)) read.images += m.content.filter((p: Json) => p?.type === 'image_url').length;
    const t = textOf(m.content);
    read.texts.push(t);
    if (m.role === 'user') readUserTurn(read, t);
  }
  for (const t of body.tools ?? []) {
    if (t?.type !== 'function' || typeof t.function?.name !== 'string') return "Missing required parameter: 'tools[0].function'.";
    read.tools.push({ name: t.function.name, schema: t.function.parameters ?? {} });
    read.texts.push(t.function.name, String(t.function.description ?? ''));
  }
  const choice = body.tool_choice;
  for (const field of ['max_tokens', 'max_completion_tokens']) {
    const problem = outputCapProblem(field, body[field]);
    if (problem) return problem;
  }
  const maxTokens = body.max_completion_tokens ?? body.max_tokens ?? null;
  const rf = body.response_format;
  if (rf != null && !['text', 'json_object', 'json_schema'].includes(rf?.type)) return "Invalid value for 'response_format.type'.";
  if (rf?.type === 'json_schema' && (typeof rf.json_schema?.name !== 'string' || typeof rf.json_schema?.schema !== 'object')) return "Missing required parameter: 'response_format.json_schema.name'.";
  if (body.reasoning_effort != null && !['none', 'minimal', 'low', 'medium', 'high'].includes(body.reasoning_effort)) return "Invalid value for 'reasoning_effort'.";
  return {
    json: rf?.type === 'json_schema' ? { schema: rf.json_schema.schema } : rf?.type === 'json_object' ? { schema: null } : null,
    reasoning: body.reasoning_effort != null && body.reasoning_effort !== 'none',
    ...read,
    forcedTool: typeof choice === 'object' && choice ? (choice.function?.name ?? null) : choice === 'required' ? 'any' : null,
    toolsOff: choice === 'none',
    maxTokens: typeof maxTokens === 'number' ? maxTokens : null,
    stop: typeof body.stop === 'string' ? [body.stop] : Array.isArray(body.stop) ? body.stop : [],
  };
}

const FINISH: Record<SimAnswer['finish'], string> = { end: 'stop', length: 'length', stop_sequence: 'stop', tool: 'tool_calls' };

function usageOf(a: SimAnswer): Json {
  const completion = (a.tool ? a.tool.argPieces.length : a.pieces.length) + a.thought.length;
  return {
    prompt_tokens: a.inputTokens,
    completion_tokens: completion,
    total_tokens: a.inputTokens + completion,
    prompt_tokens_details: { cached_tokens: a.cachedTokens, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: a.thought.length, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  };
}

function completion(id: string, model: string, a: SimAnswer, callId: string): Json {
  const message: Json = { role: 'assistant', content: a.tool ? null : a.pieces.join(''), refusal: null, annotations: [] };
  // Reasoning shown as OpenAI-compatible APIs (DeepSeek, vLLM) show it.
  if (a.thought.length) message.reasoning_content = a.thought.join('');
  if (a.tool) message.tool_calls = [{ id: callId, type: 'function', function: { name: a.tool.name, arguments: a.tool.args } }];
  return {
    id,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: FINISH[a.finish] }],
    usage: usageOf(a),
    service_tier: 'default',
    system_fingerprint: 'fp_simulator',
  };
}

function* chunks(id: string, model: string, a: SimAnswer, callId: string, includeUsage: boolean): Generator<string> {
  const created = Math.floor(Date.now() / 1000);
  const frame = (delta: Json, finish: string | null = null) => {
    const c: Json = { id, object: 'chat.completion.chunk', created, model, service_tier: 'default', system_fingerprint: 'fp_simulator', choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] };
    if (includeUsage) c.usage = null;
    return `data: ${JSON.stringify(c)}\n\n`;
  };
  yield frame({ role: 'assistant', content: a.tool ? null : '', refusal: null });
  for (const p of a.thought) yield frame({ reasoning_content: p });
  if (a.tool) {
    yield frame({ tool_calls: [{ index: 0, id: callId, type: 'function', function: { name: a.tool.name, arguments: '' } }] });
    for (const p of a.tool.argPieces) yield frame({ tool_calls: [{ index: 0, function: { arguments: p } }] });
  } else {
    for (const p of a.pieces) yield frame({ content: p });
  }
  yield frame({}, FINISH[a.finish]);
  if (includeUsage) {
    yield `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, service_tier: 'default', system_fingerprint: 'fp_simulator', choices: [], usage: usageOf(a) })}\n\n`;
  }
  yield 'data: [DONE]\n\n';
}

/** The chat route of one OpenAI-compatible API: OpenAI's own, or Ark's at /api/v3 (its own error body). */
function chatRoute(name: string, pattern: RegExp, errorBody: (status: number, message: string) => unknown): SimRoute {
  return { name, method: 'POST', pattern, auth: true, errorBody, handle };
}

export function openaiChatRoutes(): SimRoute[] {
  return [
    chatRoute('openai.chat', /^\/v1\/chat\/completions$/, errorOf),
    chatRoute('ark.chat', /^\/api\/v3\/chat\/completions$/, (status, message) => arkError(message, status === 429 ? 'RateLimitExceeded' : status >= 500 ? 'InternalServiceError' : 'BadRequest')),
  ];
}

async function handle(ctx: SimContext): Promise<void> {
  const body = readJson(ctx, (m) => openaiError(m, 'invalid_request', 'invalid_request_error'));
  if (!body) return;
  const conv = conversation(body);
  if (typeof conv === 'string') return bad(ctx, conv);
  const a = answer(conv);
  const id = nextId(ctx.state, 'chatcmpl-sim');
  const callId = nextId(ctx.state, 'call_sim');
  const model = body.model as string;
  if (body.stream === true) {
    const includeUsage = (body.stream_options as Json | undefined)?.include_usage === true;
    return streamFrames(ctx, chunks(id, model, a, callId, includeUsage));
  }
  const c = completion(id, model, a, callId);
  if (ctx.truncate) return sendTruncatedJson(ctx, c);
  sendJson(ctx.res, 200, c);
}

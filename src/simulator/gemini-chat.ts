import { answer, newReading, nextId, readUserTurn, sendTruncatedJson, streamFrames, toolInput, type SimAnswer, type SimConversation } from './chat-engine.js';
import { sendJson, type SimContext, type SimRoute } from './router.js';
import { functionResponseText } from '../wire/gemini-chat.js';
import { outputCapProblem } from './tokens.js';

// Gemini's generateContent in Google's wire format: POST /v1beta/models/{model}:generateContent
// (a GenerateContentResponse) and :streamGenerateContent?alt=sse (a stream of them, the last with
// the finish reason and the usage). Errors are {"error":{"code","message","status"}}.

type Json = Record<string, any>;

const STATUS: Record<number, string> = { 400: 'INVALID_ARGUMENT', 401: 'UNAUTHENTICATED', 403: 'PERMISSION_DENIED', 404: 'NOT_FOUND', 429: 'RESOURCE_EXHAUSTED', 500: 'INTERNAL', 503: 'UNAVAILABLE', 504: 'DEADLINE_EXCEEDED' };

export function googleError(status: number, message: string): unknown {
  return { error: { code: status, message, status: STATUS[status] ?? (status >= 500 ? 'INTERNAL' : 'FAILED_PRECONDITION') } };
}

function bad(ctx: SimContext, message: string): void {
  sendJson(ctx.res, 400, googleError(400, message));
}

/** Checks what Gemini checks and reduces the request. */
function conversation(body: Json): SimConversation | string {
  if (!Array.isArray(body.contents) || !body.contents.length) return '* GenerateContentRequest.contents: contents is not specified';
  const read = newReading();
  const si = body.systemInstruction ?? body.system_instruction;
  if (si?.parts) read.texts.push(...(si.parts as Json[]).map((p) => String(p?.text ?? '')));
  let calls: string[] = [];
  for (const [i, c] of (body.contents as Json[]).entries()) {
    if (c?.role !== undefined && c.role !== 'user' && c.role !== 'model' && c.role !== 'function') return `* GenerateContentRequest.contents[${i}].role: Please use a valid role: user, model.`;
    const parts = Array.isArray(c?.parts) ? (c.parts as Json[]) : [];
    if (!parts.length) return `* GenerateContentRequest.contents[${i}].parts: contents.parts must not be empty.`;
    let said = '';
    const results: string[] = [];
    for (const p of parts) {
      if (typeof p?.text === 'string') {
        if (p.thought !== true) said += (said ? ' ' : '') + p.text;
      } else if (p?.inlineData || p?.fileData) read.images++;
      else if (p?.functionCall) {
        if (c.role !== 'model') return `* GenerateContentRequest.contents[${i}]: a functionCall must come from the model.`;
        calls.push(String(p.functionCall.name));
        read.texts.push(String(p.functionCall.name), JSON.stringify(p.functionCall.args ?? {}));
      } else if (p?.functionResponse) {
        const at = calls.indexOf(String(p.functionResponse.name));
        if (at < 0) return `* GenerateContentRequest.contents[${i}]: function response turn comes without a function call turn for "${String(p.functionResponse.name)}".`;
        calls.splice(at, 1);
        results.push(functionResponseText(p.functionResponse.response, String(p.functionResponse.name)));
      } else return `* GenerateContentRequest.contents[${i}].parts: unknown part.`;
    }
    read.texts.push(said, ...results);
    if (c.role === 'model') continue;
    calls = [];
    readUserTurn(read, said, results);
  }
  for (const t of (body.tools ?? []) as Json[]) {
    for (const d of (t?.functionDeclarations ?? []) as Json[]) {
      if (typeof d?.name !== 'string' || !d.name) return '* GenerateContentRequest.tools[0].function_declarations[0].name: Name cannot be empty.';
      read.tools.push({ name: d.name, schema: d.parametersJsonSchema ?? d.parameters ?? {} });
      read.texts.push(d.name, String(d.description ?? ''));
    }
  }
  const fc = body.toolConfig?.functionCallingConfig ?? {};
  const mode = String(fc.mode ?? 'AUTO').toUpperCase();
  const g: Json = body.generationConfig ?? {};
  const schema = g.responseJsonSchema ?? g.responseSchema;
  if (schema && g.responseMimeType !== 'application/json') return '* GenerateContentRequest.generation_config.response_mime_type: must be application/json when a response schema is set.';
  const thinking: Json = g.thinkingConfig ?? {};
  const capProblem = outputCapProblem('generation_config.max_output_tokens', g.maxOutputTokens);
  if (capProblem) return `* GenerateContentRequest.${capProblem}`;
  return {
    ...read,
    forcedTool: mode === 'ANY' ? (Array.isArray(fc.allowedFunctionNames) && fc.allowedFunctionNames.length === 1 ? String(fc.allowedFunctionNames[0]) : 'any') : null,
    toolsOff: mode === 'NONE',
    maxTokens: g.maxOutputTokens ?? null,
    stop: Array.isArray(g.stopSequences) ? g.stopSequences : [],
    json: g.responseMimeType === 'application/json' ? { schema: schema ?? null } : null,
    reasoning: thinking.includeThoughts === true && thinking.thinkingBudget !== 0,
  };
}

function usageOf(a: SimAnswer): Json {
  const candidates = a.tool ? a.tool.argPieces.length : a.pieces.length;
  const out: Json = { promptTokenCount: a.inputTokens, candidatesTokenCount: candidates, totalTokenCount: a.inputTokens + candidates + a.thought.length };
  if (a.thought.length) out.thoughtsTokenCount = a.thought.length;
  // Part of promptTokenCount, as Gemini reports the tokens of a request's cached content.
  if (a.cachedTokens) out.cachedContentTokenCount = a.cachedTokens;
  return out;
}

const FINISH: Record<SimAnswer['finish'], string> = { end: 'STOP', length: 'MAX_TOKENS', stop_sequence: 'STOP', tool: 'STOP' };

function partsOf(a: SimAnswer): Json[] {
  const parts: Json[] = [];
  if (a.thought.length) parts.push({ text: a.thought.join(''), thought: true });
  if (a.tool) parts.push({ functionCall: { name: a.tool.name, args: toolInput(a) } });
  else parts.push({ text: a.pieces.join('') });
  return parts;
}

function* chunks(model: string, id: string, a: SimAnswer): Generator<string> {
  const frame = (parts: Json[] | null, last: boolean) => {
    const candidate: Json = { index: 0 };
    if (parts) candidate.content = { role: 'model', parts };
    if (last) candidate.finishReason = FINISH[a.finish];
    const usage = last ? usageOf(a) : { promptTokenCount: a.inputTokens, totalTokenCount: a.inputTokens };
    return `data: ${JSON.stringify({ candidates: [candidate], usageMetadata: usage, modelVersion: model, responseId: id })}\r\n\r\n`;
  };
  for (let i = 0; i < a.thought.length; i += 4) yield frame([{ text: a.thought.slice(i, i + 4).join(''), thought: true }], false);
  if (a.tool) {
    yield frame([{ functionCall: { name: a.tool.name, args: toolInput(a) } }], true);
    return;
  }
  // Gemini sends a few tokens per chunk; the last chunk carries the finish reason and the usage.
  const groups = Math.max(1, Math.ceil(a.pieces.length / 4));
  for (let g = 0; g < groups; g++) yield frame([{ text: a.pieces.slice(g * 4, g * 4 + 4).join('') }], g === groups - 1);
}

export function geminiChatRoutes(): SimRoute[] {
  return [
    {
      name: 'gemini.generate',
      method: 'POST',
      pattern: /^\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent)$/,
      auth: true,
      errorBody: googleError,
      // Google's clients send the key as x-goog-api-key or ?key=.
      authenticate(ctx) {
        if (ctx.req.headers['x-goog-api-key'] || ctx.url.searchParams.get('key')) return true;
        sendJson(ctx.res, 401, googleError(401, 'API key not valid. Please pass a valid API key.'));
        return false;
      },
      async handle(ctx) {
        let body: Json;
        try {
          body = JSON.parse(ctx.body.toString('utf8'));
          if (!body || typeof body !== 'object' || Array.isArray(body)) throw new Error('not an object');
        } catch {
          return sendJson(ctx.res, 400, googleError(400, 'Invalid JSON payload received.'));
        }
        const conv = conversation(body);
        if (typeof conv === 'string') return bad(ctx, conv);
        const a = answer(conv);
        const model = decodeURIComponent(ctx.params[0]);
        const id = nextId(ctx.state, 'gemsim');
        if (ctx.params[1] === 'streamGenerateContent') {
          if (ctx.url.searchParams.get('alt') !== 'sse') return bad(ctx, 'The simulator streams only with ?alt=sse.');
          return streamFrames(ctx, chunks(model, id, a));
        }
        const r = { candidates: [{ content: { role: 'model', parts: partsOf(a) }, finishReason: FINISH[a.finish], index: 0 }], usageMetadata: usageOf(a), modelVersion: model, responseId: id };
        if (ctx.truncate) return sendTruncatedJson(ctx, r);
        sendJson(ctx.res, 200, r);
      },
    },
  ];
}

// The simulator's chat routes spoken to directly, one request builder and one answer reader per
// wire format, reduced to what the bound tests compare: the text the model wrote (content, or a
// tool call's arguments as sent), the finish reason, the output tokens it billed, the bytes sent.

export type SimWire = 'openai' | 'responses' | 'anthropic' | 'gemini';
export const SIM_WIRES: SimWire[] = ['openai', 'responses', 'anthropic', 'gemini'];

/** Each format's word for "cut at max tokens". */
export const LENGTH_FINISH: Record<SimWire, string> = { openai: 'length', responses: 'incomplete', anthropic: 'max_tokens', gemini: 'MAX_TOKENS' };

export interface SimAsk {
  prompt: string;
  maxTokens?: number;
  /** A response schema (JSON output). */
  schema?: Record<string, unknown>;
  /** The parameters schema of one tool the model must call. */
  toolParameters?: Record<string, unknown>;
  reasoning?: boolean;
  stream?: boolean;
}

export interface SimReply {
  status: number;
  /** What the model wrote: thought excluded; a tool call's arguments as the wire carries them. */
  text: string;
  /** The tool call's arguments as an object, where the format carries one (Anthropic, Gemini). */
  toolObject?: unknown;
  finish: string | null;
  /** Output tokens as billed (reasoning included). */
  outputTokens: number;
  bytes: number;
  /** The answer (the last event's payload for a stream): for error bodies. */
  body: any;
}

function request(wire: SimWire, ask: SimAsk): { path: string; headers: Record<string, string>; body: Record<string, unknown> } {
  const json = { 'content-type': 'application/json' };
  const tool = ask.toolParameters;
  switch (wire) {
    case 'openai':
      return {
        path: '/v1/chat/completions',
        headers: { ...json, authorization: 'Bearer sk-sim' },
        body: {
          model: 'sim-chat',
          messages: [{ role: 'user', content: ask.prompt }],
          ...(ask.maxTokens !== undefined ? { max_tokens: ask.maxTokens } : {}),
          ...(ask.schema ? { response_format: { type: 'json_schema', json_schema: { name: 'out', schema: ask.schema } } } : {}),
          ...(tool ? { tools: [{ type: 'function', function: { name: 'fill', parameters: tool } }], tool_choice: 'required' } : {}),
          ...(ask.reasoning ? { reasoning_effort: 'low' } : {}),
          ...(ask.stream ? { stream: true, stream_options: { include_usage: true } } : {}),
        },
      };
    case 'responses':
      return {
        path: '/v1/responses',
        headers: { ...json, authorization: 'Bearer sk-sim' },
        body: {
          model: 'sim-chat',
          input: ask.prompt,
          ...(ask.maxTokens !== undefined ? { max_output_tokens: ask.maxTokens } : {}),
          ...(ask.schema ? { text: { format: { type: 'json_schema', name: 'out', schema: ask.schema } } } : {}),
          ...(tool ? { tools: [{ type: 'function', name: 'fill', parameters: tool }], tool_choice: 'required' } : {}),
          ...(ask.reasoning ? { reasoning: { effort: 'low' } } : {}),
          ...(ask.stream ? { stream: true } : {}),
        },
      };
    case 'anthropic':
      return {
        path: '/v1/messages',
        headers: { ...json, 'x-api-key': 'sk-ant-sim', 'anthropic-version': '2023-06-01' },
        body: {
          model: 'sim-claude',
          messages: [{ role: 'user', content: ask.prompt }],
          // Anthropic requires max_tokens; "absent" is the gateway's default for such a request.
          max_tokens: ask.maxTokens ?? 4096,
          ...(ask.schema ? { output_config: { format: { type: 'json_schema', schema: ask.schema } } } : {}),
          ...(tool ? { tools: [{ name: 'fill', input_schema: tool }], tool_choice: { type: 'any' } } : {}),
          ...(ask.reasoning ? { thinking: { type: 'enabled', budget_tokens: 1024 } } : {}),
          ...(ask.stream ? { stream: true } : {}),
        },
      };
    case 'gemini':
      return {
        path: `/v1beta/models/sim-chat:${ask.stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`,
        headers: { ...json, 'x-goog-api-key': 'sim-gemini' },
        body: {
          contents: [{ role: 'user', parts: [{ text: ask.prompt }] }],
          generationConfig: {
            ...(ask.maxTokens !== undefined ? { maxOutputTokens: ask.maxTokens } : {}),
            ...(ask.schema ? { responseMimeType: 'application/json', responseJsonSchema: ask.schema } : {}),
            ...(ask.reasoning ? { thinkingConfig: { includeThoughts: true } } : {}),
          },
          ...(tool ? { tools: [{ functionDeclarations: [{ name: 'fill', parametersJsonSchema: tool }] }], toolConfig: { functionCallingConfig: { mode: 'ANY' } } } : {}),
        },
      };
  }
}

/** The `data:` payloads of an SSE body, parsed ([DONE] left out). */
function events(text: string): any[] {
  return text
    .split(/\r?\n\r?\n/)
    .map((frame) => /^data: (.*)$/m.exec(frame)?.[1])
    .filter((d): d is string => d !== undefined && d !== '[DONE]')
    .map((d) => JSON.parse(d));
}

function readOpenai(body: any, stream: boolean): Omit<SimReply, 'status' | 'bytes' | 'body'> {
  if (!stream) {
    const m = body.choices[0].message;
    return { text: m.content ?? m.tool_calls?.[0]?.function.arguments ?? '', finish: body.choices[0].finish_reason, outputTokens: body.usage.completion_tokens };
  }
  let text = '';
  let finish: string | null = null;
  let outputTokens = -1;
  for (const e of body as any[]) {
    const c = e.choices[0];
    if (c) text += c.delta.content ?? c.delta.tool_calls?.[0]?.function?.arguments ?? '';
    if (c?.finish_reason) finish = c.finish_reason;
    if (e.usage) outputTokens = e.usage.completion_tokens;
  }
  return { text, finish, outputTokens };
}

function readResponses(body: any, stream: boolean): Omit<SimReply, 'status' | 'bytes' | 'body'> {
  const r = stream ? (body as any[]).at(-1).response : body;
  let text = '';
  if (stream) {
    for (const e of body as any[]) if (e.type === 'response.output_text.delta' || e.type === 'response.function_call_arguments.delta') text += e.delta;
  } else {
    for (const item of r.output) text += item.type === 'message' ? item.content[0].text : item.type === 'function_call' ? item.arguments : '';
  }
  return { text, finish: r.status === 'incomplete' ? 'incomplete' : r.status, outputTokens: r.usage.output_tokens };
}

function readAnthropic(body: any, stream: boolean): Omit<SimReply, 'status' | 'bytes' | 'body'> {
  if (!stream) {
    let text = '';
    let toolObject: unknown;
    for (const b of body.content) {
      if (b.type === 'text') text += b.text;
      if (b.type === 'tool_use') toolObject = b.input;
    }
    return { text, toolObject, finish: body.stop_reason, outputTokens: body.usage.output_tokens };
  }
  let text = '';
  let finish: string | null = null;
  let outputTokens = -1;
  for (const e of body as any[]) {
    if (e.type === 'content_block_delta' && e.delta.type === 'text_delta') text += e.delta.text;
    if (e.type === 'content_block_delta' && e.delta.type === 'input_json_delta') text += e.delta.partial_json;
    if (e.type === 'message_delta') {
      finish = e.delta.stop_reason;
      outputTokens = e.usage.output_tokens;
    }
  }
  return { text, finish, outputTokens };
}

function readGemini(body: any, stream: boolean): Omit<SimReply, 'status' | 'bytes' | 'body'> {
  const answers: any[] = stream ? body : [body];
  let text = '';
  let toolObject: unknown;
  let finish: string | null = null;
  let outputTokens = -1;
  for (const r of answers) {
    const c = r.candidates[0];
    for (const p of c.content?.parts ?? []) {
      if (typeof p.text === 'string' && !p.thought) text += p.text;
      if (p.functionCall) toolObject = p.functionCall.args;
    }
    if (c.finishReason) {
      finish = c.finishReason;
      outputTokens = (r.usageMetadata.candidatesTokenCount ?? 0) + (r.usageMetadata.thoughtsTokenCount ?? 0);
    }
  }
  return { text, toolObject, finish, outputTokens };
}

/** Sends one request in `wire`'s format to the simulator at `url` and reads its answer. */
export async function askSim(url: string, wire: SimWire, ask: SimAsk): Promise<SimReply> {
  const { path, headers, body } = request(wire, ask);
  const res = await fetch(`${url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
  const raw = await res.text();
  const bytes = Buffer.byteLength(raw);
  if (res.status !== 200) return { status: res.status, text: '', finish: null, outputTokens: 0, bytes, body: JSON.parse(raw) };
  const stream = ask.stream === true;
  const parsed = stream ? events(raw) : JSON.parse(raw);
  const read = { openai: readOpenai, responses: readResponses, anthropic: readAnthropic, gemini: readGemini }[wire](parsed, stream);
  return { status: 200, ...read, bytes, body: stream ? parsed.at(-1) : parsed };
}

// The hub: one internal representation of a chat request, its answer and its stream events.
// Every wire format (Chat Completions, Anthropic Messages, Responses, Gemini) has one codec that
// converts to and from these types, so n formats need n codecs instead of n² converters.

/** What a message (or an answer) is made of. */
export type HubPart =
  | { type: 'text'; text: string }
  /** An image by URL (https or data:) or inline base64 data. */
  | { type: 'image'; url?: string; data?: string; mediaType?: string }
  /** A document sent inline (PDF …) or as plain text. */
  | { type: 'file'; data: string; mediaType: string; filename?: string }
  /** A call of a client tool; `arguments` is JSON text (an object). */
  | { type: 'tool_call'; id: string; name: string; arguments: string }
  /** The result of a tool call, sent back by the client. */
  | { type: 'tool_result'; callId: string; name?: string; content: string; isError?: boolean }
  /** Reasoning / thinking the model showed (a summary, or the raw thinking where a format has it). */
  | { type: 'reasoning'; text: string; signature?: string };

export interface HubMessage {
  /** Tool results are parts of a `user` message (as Anthropic and Gemini carry them). */
  role: 'user' | 'assistant';
  parts: HubPart[];
}

export interface HubTool {
  name: string;
  description?: string;
  /** JSON Schema of the arguments (an object schema). */
  parameters: Record<string, unknown>;
  strict?: boolean;
}

export type HubToolChoice = 'auto' | 'none' | 'required' | { name: string };

export type HubResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; name: string; schema: Record<string, unknown>; strict?: boolean; description?: string };

export type HubEffort = 'minimal' | 'low' | 'medium' | 'high';

export interface HubReasoning {
  /** OpenAI's effort level; derived from a budget when a client gave tokens. */
  effort?: HubEffort;
  /** Tokens the model may think with (Anthropic budget_tokens, Gemini thinkingBudget). */
  budgetTokens?: number;
  /** false: reasoning explicitly turned off (Gemini thinkingBudget 0, Anthropic thinking disabled). */
  enabled?: boolean;
}

export interface HubRequest {
  /** The model the client named (the gateway's id). */
  model: string;
  system: string[];
  messages: HubMessage[];
  tools: HubTool[];
  toolChoice?: HubToolChoice;
  parallelToolCalls?: boolean;
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  stop: string[];
  stream: boolean;
  user?: string;
  responseFormat?: HubResponseFormat;
  reasoning?: HubReasoning;
}

export type HubStop = 'end' | 'length' | 'tool' | 'stop_sequence' | 'content_filter';

export interface HubUsage {
  /** All input tokens, cached ones included. */
  input: number;
  /** All output tokens, reasoning included. */
  output: number;
  /** Of the input, tokens read from the provider's prompt cache. */
  cachedInput?: number;
  /** Of the input, tokens written to the provider's prompt cache (Anthropic). */
  cacheWrite?: number;
  reasoning?: number;
}

export interface HubResponse {
  id: string;
  model: string;
  /** The answer's content in order: text, reasoning, tool calls. */
  parts: HubPart[];
  stop: HubStop;
  stopSequence?: string | null;
  usage: HubUsage | null;
}

/** One step of a streamed answer, whatever the wire format. */
export type HubEvent =
  | { type: 'start'; id?: string; model?: string }
  | { type: 'text'; text: string }
  | { type: 'reasoning'; text: string; signature?: string }
  /** The first event of a call carries id and name; the following ones pieces of `args`. */
  | { type: 'tool_call'; index: number; id?: string; name?: string; args?: string }
  | { type: 'usage'; usage: Partial<HubUsage> }
  | { type: 'finish'; stop: HubStop; stopSequence?: string | null }
  /** The upstream's own end marker ([DONE], message_stop, response.completed). */
  | { type: 'done' };

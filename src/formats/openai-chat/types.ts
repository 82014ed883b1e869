// The OpenAI Chat Completions wire format (POST /v1/chat/completions), the parts the gateway reads
// or writes. Fields the gateway never touches pass through untyped.

export interface OpenAITextPart {
  type: 'text';
  text: string;
}

export interface OpenAIImagePart {
  type: 'image_url';
  image_url: { url: string; detail?: 'auto' | 'low' | 'high' };
}

export interface OpenAIFilePart {
  type: 'file';
  file: { file_data?: string; file_id?: string; filename?: string };
}

export type OpenAIContentPart = OpenAITextPart | OpenAIImagePart | OpenAIFilePart | { type: string; [k: string]: unknown };

export interface OpenAIToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface OpenAIMessage {
  role: 'system' | 'developer' | 'user' | 'assistant' | 'tool' | 'function';
  content?: string | OpenAIContentPart[] | null;
  name?: string;
  tool_calls?: OpenAIToolCall[];
  tool_call_id?: string;
  refusal?: string | null;
}

export interface OpenAITool {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean | null };
}

export type OpenAIToolChoice = 'none' | 'auto' | 'required' | { type: 'function'; function: { name: string } };

export interface OpenAIChatRequest {
  model: string;
  messages: OpenAIMessage[];
  stream?: boolean | null;
  stream_options?: { include_usage?: boolean } | null;
  max_tokens?: number | null;
  max_completion_tokens?: number | null;
  temperature?: number | null;
  top_p?: number | null;
  n?: number | null;
  stop?: string | string[] | null;
  tools?: OpenAITool[];
  tool_choice?: OpenAIToolChoice;
  parallel_tool_calls?: boolean;
  user?: string;
  [k: string]: unknown;
}

export type OpenAIFinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'function_call';

export interface OpenAIUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens?: number } | null;
  [k: string]: unknown;
}

export interface OpenAIChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: {
    index: number;
    message: { role: 'assistant'; content: string | null; refusal?: string | null; tool_calls?: OpenAIToolCall[] };
    finish_reason: OpenAIFinishReason | null;
    logprobs: null;
  }[];
  usage?: OpenAIUsage;
  [k: string]: unknown;
}

export interface OpenAIToolCallDelta {
  index: number;
  id?: string;
  type?: 'function';
  function?: { name?: string; arguments?: string };
}

export interface OpenAIChunkChoice {
  index: number;
  delta: { role?: 'assistant'; content?: string | null; refusal?: string | null; tool_calls?: OpenAIToolCallDelta[] };
  finish_reason: OpenAIFinishReason | null;
  logprobs?: null;
}

export interface OpenAIChatChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: OpenAIChunkChoice[];
  usage?: OpenAIUsage | null;
  error?: unknown;
  [k: string]: unknown;
}

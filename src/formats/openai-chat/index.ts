import type { ChatCodec } from '../hub/codec.js';
import { OpenAIPassthroughStream, openaiChatRequest, openaiChatResponse } from './passthrough.js';
import { decodeOpenAIChatRequest, encodeOpenAIChatRequest } from './request.js';
import { decodeOpenAIChatResponse, encodeOpenAIChatResponse } from './response.js';
import { OpenAIChatStreamDecoder, OpenAIChatStreamEncoder } from './stream.js';
import type { OpenAIChatRequest } from './types.js';

/** OpenAI Chat Completions (POST /v1/chat/completions). */
export const openaiChatCodec: ChatCodec = {
  decodeRequest: (body) => decodeOpenAIChatRequest(body as OpenAIChatRequest),
  encodeResponse: (r, opts) => encodeOpenAIChatResponse(r, opts),
  streamEncoder: (opts) => new OpenAIChatStreamEncoder(opts),
  outputCap: (body) => (body.max_completion_tokens !== undefined ? { field: 'max_completion_tokens', value: body.max_completion_tokens } : { field: 'max_tokens', value: body.max_tokens }),
  wantsUsage: (body) => body.stream_options?.include_usage === true,
  encodeRequest: (r, model) => encodeOpenAIChatRequest(r, model) as Record<string, unknown>,
  decodeResponse: (text) => decodeOpenAIChatResponse(text),
  streamDecoder: () => new OpenAIChatStreamDecoder(),
  passthrough: {
    request: (body, model, stream) => openaiChatRequest(body as OpenAIChatRequest, model, stream),
    response: openaiChatResponse,
    stream: (includeUsage) => new OpenAIPassthroughStream(includeUsage),
  },
};

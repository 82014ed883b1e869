import type { ChatCodec } from '../hub/codec.js';
import { AnthropicPassthroughStream, anthropicChatRequest, anthropicChatResponse } from './passthrough.js';
import { decodeAnthropicRequest, encodeAnthropicRequest } from './request.js';
import { decodeAnthropicResponse, encodeAnthropicResponse } from './response.js';
import { AnthropicStreamDecoder, AnthropicStreamEncoder } from './stream.js';
import type { AnthropicRequest } from './types.js';

/** Anthropic Messages (POST /v1/messages). */
export const anthropicCodec: ChatCodec = {
  decodeRequest: (body) => decodeAnthropicRequest(body as AnthropicRequest),
  encodeResponse: (r, opts) => encodeAnthropicResponse(r, opts),
  streamEncoder: (opts) => new AnthropicStreamEncoder(opts),
  outputCap: (body) => ({ field: 'max_tokens', value: body.max_tokens }),
  encodeRequest: (r, model) => encodeAnthropicRequest(r, model) as Record<string, unknown>,
  decodeResponse: (text, req) => decodeAnthropicResponse(text, req),
  streamDecoder: (req) => new AnthropicStreamDecoder(req),
  passthrough: {
    request: (body, model, stream) => anthropicChatRequest(body as AnthropicRequest, model, stream),
    response: anthropicChatResponse,
    stream: () => new AnthropicPassthroughStream(),
  },
};

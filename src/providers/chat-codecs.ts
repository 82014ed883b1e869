import type { ChatFormat } from '../formats/chat-stream.js';
import type { AnthropicRequest } from '../formats/anthropic-types.js';
import type { OpenAIChatRequest } from '../formats/openai-types.js';
import type { ChatCodec } from './chat-types.js';
import { AnthropicPassthroughStream, anthropicChatRequest, anthropicChatResponse } from './anthropic/chat.js';
import { OpenAIPassthroughStream, openaiChatRequest, openaiChatResponse } from './openai/chat.js';

// The transforms of each chat wire format, whichever provider speaks it.
export const CHAT_CODECS: Record<ChatFormat, ChatCodec> = {
  openai: {
    request: (body, model, stream) => openaiChatRequest(body as OpenAIChatRequest, model, stream),
    response: openaiChatResponse,
    passthrough: (includeUsage) => new OpenAIPassthroughStream(includeUsage),
  },
  anthropic: {
    request: (body, model, stream) => anthropicChatRequest(body as AnthropicRequest, model, stream),
    response: anthropicChatResponse,
    passthrough: () => new AnthropicPassthroughStream(),
  },
};

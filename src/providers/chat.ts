import type { Dispatcher } from 'undici';
import type { ChannelConfig } from '../config/schema.js';
import type { ChatFormat, ReportedUsage, StreamTranslator } from '../formats/chat-stream.js';
import type { AnthropicRequest } from '../formats/anthropic-types.js';
import type { OpenAIChatRequest } from '../formats/openai-types.js';
import type { Target } from '../upstream/target.js';
import type { UpstreamFailure } from '../upstream/failure.js';
import { anthropicFailure, anthropicHeaders } from './anthropic/api.js';
import { AnthropicPassthroughStream, anthropicChat, anthropicChatRequest, anthropicChatResponse } from './anthropic/chat.js';
import { arkChat } from './ark/chat.js';
import { openaiFailure, openaiHeaders } from './openai/api.js';
import { OpenAIPassthroughStream, openaiChat, openaiChatRequest, openaiChatResponse } from './openai/chat.js';

// Which chat endpoint serves a channel, and the transforms of each wire format.

/** An upstream answer, checked, with the usage it reports. */
export interface ParsedChat<T = unknown> {
  body: T;
  usage: ReportedUsage;
}

/** Where and how a channel takes chat requests; `format` is the wire format spoken there. */
export interface ChatEndpoint {
  format: ChatFormat;
  url(target: Target): string;
  headers(target: Target, stream: boolean): Record<string, string>;
  failure(res: Dispatcher.ResponseData): Promise<UpstreamFailure>;
}

/** The transforms of one wire format, whichever channel speaks it. */
export interface ChatCodec {
  /** The request body for the upstream (already in this format). */
  request(body: Record<string, unknown>, upstreamModel: string, stream: boolean): string;
  /** The upstream's answer checked (UpstreamFailure 'malformed' when it is not one). */
  response(text: string): ParsedChat;
  /** The stream transform for a client of this same format. */
  passthrough(includeUsage: boolean): StreamTranslator;
}

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

// The simulator speaks both formats at its origin: each client gets its own format, unconverted.
const simulatorOpenAI: ChatEndpoint = {
  format: 'openai',
  url: (target) => `${target.baseUrl}/v1/chat/completions`,
  headers: (target, stream) => ({ ...openaiHeaders(target), accept: stream ? 'text/event-stream' : 'application/json' }),
  failure: openaiFailure,
};

const simulatorAnthropic: ChatEndpoint = {
  format: 'anthropic',
  url: (target) => `${target.baseUrl}/v1/messages`,
  headers: (target, stream) => ({ ...anthropicHeaders(target), accept: stream ? 'text/event-stream' : 'application/json' }),
  failure: anthropicFailure,
};

/** The chat endpoint of a channel type for a client of the given format. */
export function chatEndpointFor(type: ChannelConfig['type'], client: ChatFormat): ChatEndpoint {
  switch (type) {
    case 'openai':
      return openaiChat;
    case 'ark':
      return arkChat;
    case 'anthropic':
      return anthropicChat;
    case 'simulator':
      return client === 'anthropic' ? simulatorAnthropic : simulatorOpenAI;
  }
}

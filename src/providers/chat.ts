import type { Dispatcher } from 'undici';
import type { ChannelConfig } from '../config/schema.js';
import type { ChatFormat } from '../formats/chat-stream.js';
import type { Target } from '../upstream/target.js';
import type { UpstreamFailure } from '../upstream/failure.js';
import { anthropicFailure, anthropicHeaders } from './anthropic/api.js';
import { anthropicChat } from './anthropic/chat.js';
import { arkChat } from './ark/chat.js';
import { geminiFailure, geminiHeaders } from './gemini/api.js';
import { geminiChat, geminiChatPath } from './gemini/chat.js';
import { openaiFailure, openaiHeaders } from './openai/api.js';
import { openaiChat, openaiResponses } from './openai/chat.js';

// Which chat endpoint serves a channel. The wire formats themselves (request, answer and stream
// codecs) are in src/formats/; a provider only says where, with which headers, in which format,
// and how its errors read.

/** Where and how a channel takes chat requests; `format` is the wire format spoken there. */
export interface ChatEndpoint {
  format: ChatFormat;
  url(target: Target, stream: boolean): string;
  headers(target: Target, stream: boolean): Record<string, string>;
  failure(res: Dispatcher.ResponseData): Promise<UpstreamFailure>;
}

const accept = (stream: boolean) => (stream ? 'text/event-stream' : 'application/json');

// The simulator speaks every format at its origin, each at the real provider's path.
const SIMULATOR: Record<ChatFormat, ChatEndpoint> = {
  openai: { format: 'openai', url: (t) => `${t.baseUrl}/v1/chat/completions`, headers: (t, s) => ({ ...openaiHeaders(t), accept: accept(s) }), failure: openaiFailure },
  responses: { format: 'responses', url: (t) => `${t.baseUrl}/v1/responses`, headers: (t, s) => ({ ...openaiHeaders(t), accept: accept(s) }), failure: openaiFailure },
  anthropic: { format: 'anthropic', url: (t) => `${t.baseUrl}/v1/messages`, headers: (t, s) => ({ ...anthropicHeaders(t), accept: accept(s) }), failure: anthropicFailure },
  gemini: {
    format: 'gemini',
    url: (t, s) => `${t.baseUrl}/v1beta${geminiChatPath(t.upstreamModel, s)}`,
    headers: (t, s) => ({ ...geminiHeaders(t), accept: accept(s) }),
    failure: geminiFailure,
  },
};

/**
 * The chat endpoint of a channel for a client of the given format. An `openai` channel speaks
 * Chat Completions unless `upstream_format: responses`; a `simulator` channel speaks its
 * `upstream_format`, or else the client's own format.
 */
export function chatEndpointFor(channel: Pick<ChannelConfig, 'type' | 'upstream_format'>, client: ChatFormat): ChatEndpoint {
  switch (channel.type) {
    case 'openai':
      return channel.upstream_format === 'responses' ? openaiResponses : openaiChat;
    case 'ark':
      return arkChat;
    case 'anthropic':
      return anthropicChat;
    case 'gemini':
      return geminiChat;
    case 'simulator':
      return SIMULATOR[channel.upstream_format ?? client];
  }
}

import type { GatewayError } from '../http/errors.js';
import type { ChatFormat } from './chat-stream.js';
import { anthropicCodec } from './anthropic/index.js';
import { geminiCodec } from './gemini/index.js';
import type { ChatCodec } from './hub/codec.js';
import { openaiChatCodec } from './openai-chat/index.js';
import { responsesCodec } from './openai-responses/index.js';

/** The codec of every chat wire format; clients and upstreams pick theirs independently. */
export const CHAT_CODECS: Record<ChatFormat, ChatCodec> = {
  openai: openaiChatCodec,
  anthropic: anthropicCodec,
  responses: responsesCodec,
  gemini: geminiCodec,
};

/** The frames that end a client's stream with an error, in the client's format. */
export function streamErrorFrame(client: ChatFormat, err: GatewayError): string {
  return CHAT_CODECS[client].streamEncoder({ model: '', includeUsage: false }).error(err);
}

import type { ChatEndpoint } from '../chat-types.js';
import { anthropicFailure, anthropicHeaders, anthropicUrl } from './api.js';

// Anthropic Messages: POST {base_url}/v1/messages with x-api-key and anthropic-version. The wire
// format itself is in src/formats/anthropic/.

/** The Anthropic channel: base_url is the origin (https://api.anthropic.com). */
export const anthropicChat: ChatEndpoint = {
  format: 'anthropic',
  url: (target) => anthropicUrl(target, '/v1/messages'),
  headers: (target, stream) => ({ ...anthropicHeaders(target), accept: stream ? 'text/event-stream' : 'application/json' }),
  failure: anthropicFailure,
  countUrl: (target) => anthropicUrl(target, '/v1/messages/count_tokens'),
};

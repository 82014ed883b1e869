import type { ChatEndpoint } from '../chat-types.js';
import { openaiFailure, openaiHeaders, openaiUrl } from './api.js';

// OpenAI: Chat Completions at {base_url}/chat/completions, or (upstream_format: responses) the
// Responses API at {base_url}/responses. The wire formats themselves are in src/formats/.

/** The OpenAI channel: base_url is the API root including /v1. */
export const openaiChat: ChatEndpoint = {
  format: 'openai',
  url: (target) => openaiUrl(target, '/chat/completions'),
  headers: (target, stream) => ({ ...openaiHeaders(target), accept: stream ? 'text/event-stream' : 'application/json' }),
  failure: openaiFailure,
};

/** The same channel speaking the Responses API. */
export const openaiResponses: ChatEndpoint = {
  format: 'responses',
  url: (target) => openaiUrl(target, '/responses'),
  headers: (target, stream) => ({ ...openaiHeaders(target), accept: stream ? 'text/event-stream' : 'application/json' }),
  failure: openaiFailure,
};

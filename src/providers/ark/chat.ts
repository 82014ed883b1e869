import type { ChatEndpoint } from '../chat-types.js';
import { arkFailure, arkHeaders, arkUrl } from './api.js';

// Volcengine Ark chat is OpenAI Chat Completions at {base_url}/api/v3/chat/completions: the OpenAI
// request, response and stream transforms apply unchanged (src/formats/ picks them by
// `format`); only the address, headers and error body differ.
export const arkChat: ChatEndpoint = {
  format: 'openai',
  url: (target) => arkUrl(target, '/chat/completions'),
  headers: (target, stream) => ({ ...arkHeaders(target), accept: stream ? 'text/event-stream' : 'application/json' }),
  failure: arkFailure,
};

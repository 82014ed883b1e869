import type { Target } from '../../upstream/target.js';
import type { ChatEndpoint } from '../chat-types.js';
import { geminiFailure, geminiHeaders, geminiUrl } from './api.js';

// Gemini chat: POST {base_url}/v1beta/models/{model}:generateContent, or
// :streamGenerateContent?alt=sse for a stream (server-sent events of whole response chunks).

export function geminiChatPath(model: string, stream: boolean): string {
  return `/models/${encodeURIComponent(model)}:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`;
}

export const geminiChat: ChatEndpoint = {
  format: 'gemini',
  url: (target: Target, stream: boolean) => geminiUrl(target, geminiChatPath(target.upstreamModel, stream)),
  headers: (target, stream) => ({ ...geminiHeaders(target), accept: stream ? 'text/event-stream' : 'application/json' }),
  failure: geminiFailure,
};

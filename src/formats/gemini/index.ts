import type { ChatCodec } from '../hub/codec.js';
import { GeminiPassthroughStream, geminiPassthroughRequest, geminiPassthroughResponse } from './passthrough.js';
import { decodeGeminiRequest, encodeGeminiRequest } from './request.js';
import { decodeGeminiResponse, encodeGeminiResponse } from './response.js';
import { GeminiStreamDecoder, GeminiStreamEncoder } from './stream.js';

/** Google Gemini (POST /v1beta/models/{model}:generateContent and :streamGenerateContent). */
export const geminiCodec: ChatCodec = {
  decodeRequest: (body) => decodeGeminiRequest(body),
  encodeResponse: (r, opts) => encodeGeminiResponse(r, opts),
  streamEncoder: (opts) => new GeminiStreamEncoder(opts),
  outputCap: (body) => ({ field: 'generationConfig.maxOutputTokens', value: body.generationConfig?.maxOutputTokens }),
  encodeRequest: (r) => encodeGeminiRequest(r),
  decodeResponse: (text) => decodeGeminiResponse(text),
  streamDecoder: () => new GeminiStreamDecoder(),
  passthrough: {
    request: (body) => geminiPassthroughRequest(body),
    response: geminiPassthroughResponse,
    stream: () => new GeminiPassthroughStream(),
  },
};

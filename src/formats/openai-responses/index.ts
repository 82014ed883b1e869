import type { ChatCodec } from '../hub/codec.js';
import { decodeResponsesRequest, encodeResponsesRequest } from './request.js';
import { decodeResponsesResponse, encodeResponsesResponse } from './response.js';
import { ResponsesStreamDecoder, ResponsesStreamEncoder } from './stream.js';

/**
 * OpenAI Responses (POST /v1/responses). No pass-through: the gateway keeps the conversation state
 * itself (previous_response_id, item_reference) and mints its own response and item ids, so even a
 * Responses upstream is sent the whole conversation and its answer re-encoded.
 */
export const responsesCodec: ChatCodec = {
  decodeRequest: (body) => decodeResponsesRequest(body),
  encodeResponse: (r, opts) => encodeResponsesResponse(r, opts),
  streamEncoder: (opts) => new ResponsesStreamEncoder(opts),
  outputCap: (body) => ({ field: 'max_output_tokens', value: body.max_output_tokens }),
  encodeRequest: (r, model) => encodeResponsesRequest(r, model),
  decodeResponse: (text) => decodeResponsesResponse(text),
  streamDecoder: () => new ResponsesStreamDecoder(),
};

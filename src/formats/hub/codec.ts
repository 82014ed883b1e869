import type { GatewayError } from '../../http/errors.js';
import type { ReportedUsage, StreamTranslator } from '../chat-stream.js';
import type { SseEvent } from '../sse.js';
import type { HubEvent, HubRequest, HubResponse, HubUsage } from './types.js';

// What one wire format offers: the client side (its requests into the hub, the hub's answers out
// in its shape), the upstream side (hub requests out, its answers into the hub), and the
// pass-through used when the client and the upstream speak it both.

/** An upstream answer, checked, with the usage it reports. */
export interface ParsedChat<T = unknown> {
  body: T;
  usage: ReportedUsage;
}

/** Upstream stream events of one format → hub events. Throws an UpstreamFailure on an error event. */
export interface StreamDecoder {
  push(ev: SseEvent): HubEvent[];
}

/** Hub events → client frames of one format. */
export interface StreamEncoder {
  push(e: HubEvent): string;
  /** The frames that close the stream once the answer is whole (usage as finally known). */
  end(usage: HubUsage): string;
  /** The frames that end a broken stream with an error. */
  error(err: GatewayError): string;
  /** The whole answer as a non-streamed body of this format, once ended (for stored responses). */
  final?(): unknown;
}

export interface ClientOptions {
  /** The model the client named: answers carry it when the upstream did not say. */
  model: string;
  /** An OpenAI Chat Completions client asked for the usage chunk. */
  includeUsage: boolean;
  /** Responses API: the id the gateway gave the response, and request fields it echoes. */
  responseId?: string;
  echo?: Record<string, unknown>;
}

export interface ChatCodec {
  // ---- client side ----
  /** A client request of this format in the hub (a GatewayError 400 names what cannot be carried). */
  decodeRequest(body: Record<string, unknown>): HubRequest;
  /** The hub's answer as this format's response body. */
  encodeResponse(r: HubResponse, opts: ClientOptions): unknown;
  streamEncoder(opts: ClientOptions): StreamEncoder;
  /** The output cap a client request of this format set, and the name of its field (for holds and hints). */
  outputCap(body: Record<string, any>): { field: string; value: unknown };
  /** Whether a streamed client request of this format asked for a usage report (only Chat Completions asks). */
  wantsUsage?(body: Record<string, any>): boolean;
  // ---- upstream side ----
  /** The hub request as this format's body, for the upstream model. */
  encodeRequest(r: HubRequest, upstreamModel: string): Record<string, unknown>;
  /**
   * This format's answer in the hub (an UpstreamFailure 'malformed' when it is not one). The
   * request is given so an emulation the encoder set up (a forced JSON tool) can be undone.
   */
  decodeResponse(text: string, req: HubRequest): HubResponse;
  streamDecoder(req: HubRequest): StreamDecoder;
  // ---- pass-through (client and upstream both speak this format) ----
  passthrough?: {
    request(body: Record<string, unknown>, upstreamModel: string, stream: boolean): string;
    response(text: string): ParsedChat;
    stream(includeUsage: boolean): StreamTranslator;
  };
}

import type { Dispatcher } from 'undici';
import type { ChatFormat, ReportedUsage, StreamTranslator } from '../formats/chat-stream.js';
import type { Target } from '../upstream/target.js';
import type { UpstreamFailure } from '../upstream/failure.js';

// The chat capability: where a channel takes chat requests and the transforms of each wire format.

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

import type { ChatFormat } from '../formats/chat-stream.js';
import type { Target } from '../upstream/target.js';
import type { UpstreamFailure } from '../upstream/failure.js';
import type { ErrorAnswer } from '../upstream/status-failure.js';

// The chat capability of a provider: where, with which headers and in which wire format it takes
// chat requests, and how its errors read. The wire formats themselves (request, answer and stream
// codecs) are in src/formats/.

/** Where and how a channel takes chat requests; `format` is the wire format spoken there. */
export interface ChatEndpoint {
  format: ChatFormat;
  url(target: Target, stream: boolean): string;
  headers(target: Target, stream: boolean): Record<string, string>;
  /** A non-2xx answer as an UpstreamFailure carrying the provider's message. */
  failure(res: ErrorAnswer): Promise<UpstreamFailure>;
  /** Where the channel counts a request's input tokens itself (same headers), when it can. */
  countUrl?(target: Target): string;
}

import type { ChatFormat, ReportedUsage, StreamTranslator } from '../formats/chat-stream.js';
import { CHAT_CODECS } from '../formats/index.js';
import type { ClientOptions } from '../formats/hub/codec.js';
import { ConvertingStream } from '../formats/hub/convert-stream.js';
import type { HubRequest } from '../formats/hub/types.js';
import { SseReader } from '../formats/sse.js';
import type { ChatEndpoint } from '../providers/chat-types.js';
import { chatEndpointFor } from '../providers/index.js';
import type { Target } from '../upstream/target.js';
import { UpstreamFailure, toUpstreamFailure } from '../upstream/failure.js';
import type { UpstreamClient } from '../upstream/client.js';
import type { DepartureSignal } from '../http/departure.js';
import { markFirstToken } from '../telemetry/genai.js';

// One chat attempt against one channel: pick the channel's endpoint, and either pass the request
// through (the channel speaks the client's format) or convert it through the hub — the client's
// codec decodes, the upstream's encodes, and the answer goes back the other way. Everything that
// goes wrong before the client got a byte is an UpstreamFailure, so Relay.run can try the next
// channel.

export interface ChatCall {
  client: ChatFormat;
  /** The client's request as validated (its own format). */
  body: Record<string, unknown>;
  stream: boolean;
  /** An OpenAI client asked for the usage chunk. */
  includeUsage: boolean;
  /** Aborted when the client goes away. */
  signal: DepartureSignal;
  /** At least the size of `body` as JSON, when the route knows it without serializing (a body it expanded). */
  bodyBytes?: number;
  /** Responses API: the id the answer gets and request fields it echoes. */
  responseId?: string;
  echo?: Record<string, unknown>;
  /** The request in the hub, decoded once for every converting attempt. */
  hub?: HubRequest;
}

export interface ChatAnswer {
  /** JSON text in the client's format. */
  payload: string;
  /** The same answer as parsed or built on the way (read for a sampled trace's facts). */
  body: Record<string, unknown>;
  usage: ReportedUsage;
}

/** A stream the upstream has started: what to send first, and where the rest comes from. */
export interface OpenedStream {
  first: string;
  reader: SseReader;
  translator: StreamTranslator;
}

/** The request in the hub (decoded on first need; a GatewayError 400 when it cannot be carried). */
export function hubOf(call: ChatCall): HubRequest {
  if (!call.hub) {
    call.hub = CHAT_CODECS[call.client].decodeRequest(call.body);
    call.hub.stream = call.stream;
  }
  return call.hub;
}

function clientOptions(call: ChatCall): ClientOptions {
  return { model: String(call.body.model), includeUsage: call.includeUsage, responseId: call.responseId, echo: call.echo };
}

export class ChatRelay {
  constructor(private readonly upstream: UpstreamClient) {}

  async complete(call: ChatCall, target: Target): Promise<ChatAnswer> {
    const { endpoint, target: to } = this.endpoint(call, target);
    const passthrough = this.passthrough(call, endpoint);
    // The whole answer at once: gathered by the dispatch itself, no body stream in between.
    const got = await this.upstream.collect({
      url: endpoint.url(to, call.stream),
      method: 'POST',
      headers: endpoint.headers(to, call.stream),
      body: this.requestBody(call, to, endpoint),
      signal: call.signal,
      traceparent: target.traceparent,
      tracestate: target.tracestate,
    });
    if (got.statusCode < 200 || got.statusCode >= 300) throw await endpoint.failure(got);
    const text = got.text;
    if (passthrough) {
      const parsed = passthrough.response(text);
      return { payload: text, body: parsed.body as Record<string, unknown>, usage: parsed.usage };
    }
    const answer = CHAT_CODECS[endpoint.format].decodeResponse(text, hubOf(call));
    const body = CHAT_CODECS[call.client].encodeResponse(answer, clientOptions(call)) as Record<string, unknown>;
    const payload = JSON.stringify(body);
    const u = answer.usage;
    return { payload, body, usage: { input: u?.input ?? null, output: u?.output ?? null, cachedInput: u?.cachedInput ?? null, cacheWrite: u?.cacheWrite ?? null } };
  }

  /**
   * Starts a stream and reads up to the first event that gives the client something, so a
   * channel that fails before that (or answers with something that is not a stream) can still be
   * replaced by the next one.
   */
  async open(call: ChatCall, target: Target): Promise<OpenedStream> {
    const { endpoint, target: to } = this.endpoint(call, target);
    // Read as it arrives through the dispatch's own handler: no body stream in between.
    const res = await this.upstream.openStream({
      url: endpoint.url(to, call.stream),
      method: 'POST',
      headers: endpoint.headers(to, call.stream),
      body: this.requestBody(call, to, endpoint),
      signal: call.signal,
      traceparent: target.traceparent,
      tracestate: target.tracestate,
    });
    if (res.statusCode < 200 || res.statusCode >= 300) {
      const text = await res.text();
      throw await endpoint.failure({ statusCode: res.statusCode, headers: res.headers, text });
    }
    if (!res.contentType.startsWith('text/event-stream')) {
      await res.text();
      throw new UpstreamFailure('malformed', 'the upstream answered a stream request without an event stream', res.statusCode);
    }
    const reader = new SseReader(res, res.limits.eventBytes);
    const translator = this.translator(call, endpoint);
    try {
      let first = '';
      while (!first) {
        const events = await reader.next();
        if (events === null) {
          const tail = translator.end();
          if (tail === null) throw new UpstreamFailure('malformed', 'the upstream stream ended before its answer began');
          first = tail;
          break;
        }
        for (const ev of events) first += translator.push(ev);
      }
      markFirstToken(target);
      return { first, reader, translator };
    } catch (err) {
      reader.cancel();
      throw toUpstreamFailure(err, call.signal);
    }
  }

  /** The same-format pass-through of this call on this endpoint, if it has one. */
  private passthrough(call: ChatCall, endpoint: ChatEndpoint) {
    return endpoint.format === call.client ? CHAT_CODECS[call.client].passthrough : undefined;
  }

  private translator(call: ChatCall, endpoint: ChatEndpoint): StreamTranslator {
    const passthrough = this.passthrough(call, endpoint);
    if (passthrough) return passthrough.stream(call.includeUsage);
    return new ConvertingStream(CHAT_CODECS[endpoint.format].streamDecoder(hubOf(call)), CHAT_CODECS[call.client].streamEncoder(clientOptions(call)));
  }

  /** The channel's chat endpoint for this client; a channel type without chat is a misconfiguration: try the next. */
  private endpoint(call: ChatCall, target: Target): { endpoint: ChatEndpoint; target: Target } {
    const found = chatEndpointFor(target, call.client);
    if (!found) throw new UpstreamFailure('status', `channel type "${target.channel.type}" has no chat`, 501);
    return found;
  }

  /** The request body for this channel: passed through, or converted through the hub. */
  private requestBody(call: ChatCall, target: Target, endpoint: ChatEndpoint): string {
    const passthrough = this.passthrough(call, endpoint);
    return passthrough
      ? passthrough.request(call.body, target.upstreamModel, call.stream)
      : JSON.stringify(CHAT_CODECS[endpoint.format].encodeRequest(hubOf(call), target.upstreamModel));
  }
}

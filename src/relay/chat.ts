import type { ChatFormat, ReportedUsage, StreamTranslator } from '../formats/chat-stream.js';
import type { AnthropicMessage, AnthropicRequest } from '../formats/anthropic-types.js';
import type { OpenAIChatCompletion, OpenAIChatRequest } from '../formats/openai-types.js';
import { anthropicToOpenAIRequest } from '../formats/anthropic-to-openai/request.js';
import { anthropicToOpenAIResponse } from '../formats/anthropic-to-openai/response.js';
import { AnthropicToOpenAIStream } from '../formats/anthropic-to-openai/stream.js';
import { openaiToAnthropicRequest } from '../formats/openai-to-anthropic/request.js';
import { openaiToAnthropicResponse } from '../formats/openai-to-anthropic/response.js';
import { OpenAIToAnthropicStream } from '../formats/openai-to-anthropic/stream.js';
import { SseReader } from '../formats/sse.js';
import { CHAT_CODECS } from '../providers/chat-codecs.js';
import type { ChatEndpoint } from '../providers/chat-types.js';
import { chatEndpointFor } from '../providers/index.js';
import type { Target } from '../upstream/target.js';
import { UpstreamFailure, toUpstreamFailure } from '../upstream/failure.js';
import { readText } from '../upstream/json.js';
import type { UpstreamClient } from '../upstream/client.js';

// One chat attempt against one channel: pick the channel's endpoint, convert the request when the
// channel speaks the other format, send it, and check (and convert) the answer. Everything that
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
  signal: AbortSignal;
}

export interface ChatAnswer {
  /** JSON text in the client's format. */
  payload: string;
  usage: ReportedUsage;
}

/** A stream the upstream has started: what to send first, and where the rest comes from. */
export interface OpenedStream {
  first: string;
  reader: SseReader;
  translator: StreamTranslator;
}

export class ChatRelay {
  constructor(private readonly upstream: UpstreamClient) {}

  async complete(call: ChatCall, target: Target): Promise<ChatAnswer> {
    const { endpoint, target: to } = this.endpoint(call, target);
    const res = await this.send(call, to, endpoint);
    const text = await readText(res, call.signal);
    const parsed = CHAT_CODECS[endpoint.format].response(text);
    if (endpoint.format === call.client) return { payload: text, usage: parsed.usage };
    const converted =
      call.client === 'openai'
        ? anthropicToOpenAIResponse(parsed.body as AnthropicMessage)
        : openaiToAnthropicResponse(parsed.body as OpenAIChatCompletion);
    return { payload: JSON.stringify(converted), usage: parsed.usage };
  }

  /**
   * Starts a stream and reads up to the first event that gives the client something, so a
   * channel that fails before that (or answers with something that is not a stream) can still be
   * replaced by the next one.
   */
  async open(call: ChatCall, target: Target): Promise<OpenedStream> {
    const { endpoint, target: to } = this.endpoint(call, target);
    const res = await this.send(call, to, endpoint);
    const type = String(res.headers['content-type'] ?? '');
    if (!type.startsWith('text/event-stream')) {
      await readText(res, call.signal).catch(() => '');
      throw new UpstreamFailure('malformed', 'the upstream answered a stream request without an event stream', res.statusCode);
    }
    const reader = new SseReader(res.body);
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
      return { first, reader, translator };
    } catch (err) {
      await reader.cancel();
      throw toUpstreamFailure(err, call.signal);
    }
  }

  private translator(call: ChatCall, endpoint: ChatEndpoint): StreamTranslator {
    if (endpoint.format === call.client) return CHAT_CODECS[endpoint.format].passthrough(call.includeUsage);
    const model = String(call.body.model);
    return call.client === 'openai' ? new AnthropicToOpenAIStream(model, call.includeUsage) : new OpenAIToAnthropicStream(model);
  }

  /** The channel's chat endpoint for this client; a channel type without chat is a misconfiguration: try the next. */
  private endpoint(call: ChatCall, target: Target): { endpoint: ChatEndpoint; target: Target } {
    const found = chatEndpointFor(target, call.client);
    if (!found) throw new UpstreamFailure('status', `channel type "${target.channel.type}" has no chat`, 501);
    return found;
  }

  private async send(call: ChatCall, target: Target, endpoint: ChatEndpoint) {
    let body = call.body;
    if (endpoint.format !== call.client) {
      body = (
        call.client === 'openai'
          ? openaiToAnthropicRequest(call.body as unknown as OpenAIChatRequest)
          : anthropicToOpenAIRequest(call.body as unknown as AnthropicRequest)
      ) as unknown as Record<string, unknown>;
    }
    const res = await this.upstream.send({
      url: endpoint.url(target),
      method: 'POST',
      headers: endpoint.headers(target, call.stream),
      body: CHAT_CODECS[endpoint.format].request(body, target.upstreamModel, call.stream),
      signal: call.signal,
    });
    if (res.statusCode < 200 || res.statusCode >= 300) throw await endpoint.failure(res);
    return res;
  }
}

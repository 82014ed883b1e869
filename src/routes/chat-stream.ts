import type { OutgoingHttpHeaders } from 'node:http';
import type { ChatFormat } from '../formats/chat-stream.js';
import type { ExchangeReply } from './exchange.js';
import type { DepartureSignal } from '../http/departure.js';
import { streamErrorFrame } from '../formats/index.js';
import { redact } from '../http/redact.js';
import { SseWriter } from '../formats/sse.js';
import type { OpenedStream } from '../relay/chat.js';
import { failureToGatewayError } from '../relay/relay.js';
import { CLIENT_CLOSED } from '../relay/metered.js';
import { UpstreamFailure, toUpstreamFailure } from '../upstream/failure.js';

export interface StreamOutcome {
  /** For the ledger: 200 whole, 499 client gone, else the gateway status of the upstream failure. */
  status: number;
  /** The upstream broke mid-stream (not the client leaving). */
  failure: UpstreamFailure | null;
}

/**
 * Sends an opened upstream stream to the client as its events arrive. Nothing is buffered beyond
 * one network chunk: when the client's socket is full the loop waits for 'drain' before reading
 * the upstream again, so back-pressure reaches the upstream socket. An upstream that breaks ends
 * the client's stream with an error event in the client's format; a client that leaves aborts the
 * upstream (the caller's AbortSignal) and the loop stops.
 */
export async function pipeChatStream(
  reply: ExchangeReply,
  client: ChatFormat,
  opened: OpenedStream,
  signal: DepartureSignal,
  /** Runs once the whole answer was written, before the response ends (a stored answer is then readable when the client sees the end). */
  beforeEnd?: () => Promise<void>,
): Promise<StreamOutcome> {
  reply.hijack();
  const res = reply.raw;
  // Headers set by hooks (rate-limit headers, say) still go out on a hijacked reply.
  const headers: OutgoingHttpHeaders = { ...reply.getHeaders() };
  headers['content-type'] = 'text/event-stream; charset=utf-8';
  headers['cache-control'] = 'no-cache';
  headers['x-accel-buffering'] = 'no';
  delete headers['content-length'];
  const writer = new SseWriter(res);
  const { reader, translator } = opened;
  let failure: UpstreamFailure | null = null;
  try {
    res.writeHead(200, headers);
    let ready = writer.write(opened.first);
    while (!translator.complete) {
      if (!ready) await writer.drain();
      if (writer.closed || signal.aborted) break;
      const events = await reader.next();
      if (events === null) {
        const tail = translator.end();
        if (tail === null) failure = new UpstreamFailure('malformed', 'the upstream stream ended before the answer was complete');
        else if (tail) writer.write(tail);
        break;
      }
      let out = '';
      for (const ev of events) out += translator.push(ev);
      if (out) ready = writer.write(out);
    }
  } catch (err) {
    failure = toUpstreamFailure(err, signal);
  }

  const clientGone = signal.aborted || (writer.closed && !translator.complete);
  if (clientGone || (failure && failure.kind === 'aborted')) {
    writer.end();
    reader.cancel();
    return { status: CLIENT_CLOSED, failure: null };
  }
  if (failure) {
    const g = failureToGatewayError(failure);
    writer.end(redact(streamErrorFrame(client, g)));
    reader.cancel();
    return { status: g.status, failure };
  }
  if (beforeEnd) await beforeEnd().catch(() => undefined);
  writer.end();
  // The rest of the upstream (usually nothing after the end marker) is read without keeping it, so
  // its keep-alive connection serves the next request instead of being torn down.
  reader.discard();
  return { status: 200, failure: null };
}

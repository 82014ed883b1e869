import type { OutgoingHttpHeaders } from 'node:http';
import type { ChatFormat } from '../formats/chat-stream.js';
import type { Reply } from '../pipeline/request.js';
import type { DepartureSignal } from '../http/departure.js';
import { streamErrorFrame } from '../formats/index.js';
import { redact } from '../http/redact.js';
import { SseWriter, type EventSink, type SseEvent, type SseReader } from '../formats/sse.js';
import type { StreamTranslator } from '../formats/chat-stream.js';
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
 * Sends an opened upstream stream to the client as its events arrive: each chunk's events are
 * translated and written from the upstream's own data callback (EventRelay), with no promise or
 * suspended frame per chunk while a stream is held open. Nothing is buffered beyond one network
 * chunk: when the client's socket is full the upstream is paused until 'drain', so back-pressure
 * reaches the upstream socket. An upstream that breaks ends the client's stream with an error event
 * in the client's format; a client that leaves aborts the upstream (the caller's AbortSignal) and
 * the relay stops.
 */
export function pipeChatStream(
  reply: Reply,
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
  // Not an async function: while the stream is held only the relay and the continuation below are
  // kept, no suspended frame.
  let relayed: Promise<UpstreamFailure | null>;
  try {
    res.writeHead(200, headers);
    const ready = writer.write(opened.first);
    // Sent: not kept for as long as the stream is held.
    opened.first = '';
    relayed = translator.complete ? Promise.resolve(null) : new Promise((settle) => new EventRelay(writer, reader, translator, signal, settle).start(ready));
  } catch (err) {
    relayed = Promise.resolve(toUpstreamFailure(err, signal));
  }
  const finish = (failure: UpstreamFailure | null) => {
    // Ended by an error event, not the answer: not one an Idempotency-Key replays.
    if (failure) reply.incomplete = true;
    return endChatStream(writer, client, opened, signal, failure, beforeEnd);
  };
  return relayed.then(finish, (err: unknown) => finish(toUpstreamFailure(err, signal)));
}

/** The end of a relayed stream: the outcome for the ledger, the error event of a broken upstream, the upstream let go. */
async function endChatStream(
  writer: SseWriter,
  client: ChatFormat,
  { reader, translator }: OpenedStream,
  signal: DepartureSignal,
  failure: UpstreamFailure | null,
  beforeEnd?: () => Promise<void>,
): Promise<StreamOutcome> {
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

/**
 * Writes the events of each upstream chunk as the chunk arrives, until the answer is complete, the
 * upstream ends or breaks, or the client is gone; then settles once with the upstream's failure
 * (null otherwise: the caller tells a finished answer from a client that left). When the client's
 * socket is full, the upstream waits for 'drain' (or the client's leaving) before it is read again.
 */
class EventRelay implements EventSink {
  private settled = false;

  constructor(
    private readonly writer: SseWriter,
    private readonly reader: SseReader,
    private readonly translator: StreamTranslator,
    private readonly signal: DepartureSignal,
    private readonly settle: (failure: UpstreamFailure | null) => void,
  ) {}

  /** `ready`: whether the client's socket takes more now (false: read on after 'drain'). */
  start(ready: boolean): void {
    if (ready) this.reader.pushTo(this);
    else void this.writer.drain().then(() => this.gone() || this.reader.pushTo(this));
  }

  events(events: SseEvent[]): boolean {
    if (this.settled || this.gone()) return true;
    let out = '';
    try {
      for (const ev of events) out += this.translator.push(ev);
    } catch (err) {
      this.done(toUpstreamFailure(err, this.signal));
      return true;
    }
    const ready = out ? this.writer.write(out) : true;
    if (this.translator.complete) this.done(null);
    else if (!ready) {
      void this.writer.drain().then(() => this.gone() || this.reader.resume());
      return false;
    }
    return true;
  }

  end(): void {
    if (this.settled || this.gone()) return;
    let tail: string | null;
    try {
      tail = this.translator.end();
    } catch (err) {
      return this.done(toUpstreamFailure(err, this.signal));
    }
    if (tail === null) return this.done(new UpstreamFailure('malformed', 'the upstream stream ended before the answer was complete'));
    if (tail) this.writer.write(tail);
    this.done(null);
  }

  fail(err: unknown): void {
    if (!this.settled) this.done(toUpstreamFailure(err, this.signal));
  }

  /** The client left (or was already gone): settled without a failure, the caller sees why. */
  private gone(): boolean {
    if (this.settled) return true;
    if (!this.writer.closed && !this.signal.aborted) return false;
    this.done(null);
    return true;
  }

  private done(failure: UpstreamFailure | null): void {
    this.settled = true;
    this.settle(failure);
  }
}

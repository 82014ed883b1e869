import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import { Agent, request, type Dispatcher } from 'undici';
import { guardedAgent } from './address-guard.js';
import type { AbortLike } from './abort-like.js';
import { UpstreamFailure, toUpstreamFailure } from './failure.js';
import { DEFAULT_ANSWER_LIMITS, oversized, setAnswerLimits, type AnswerLimits } from './json.js';

/**
 * The one HTTP client for every upstream call: a pooled keep-alive undici Agent. Timeouts:
 * connect, first byte (headers) and the gap between body chunks (stream idle).
 */
export interface UpstreamTimeouts {
  connectMs: number;
  firstByteMs: number;
  idleMs: number;
  /** Sockets per origin; each concurrent stream holds one. */
  maxConnections?: number;
  /** Caps on what of an answer is held in memory (readText, stream events). */
  answerLimits?: AnswerLimits;
}

export interface SendOptions {
  url: string;
  method: Dispatcher.HttpMethod;
  headers: Record<string, string>;
  /** A Readable streams the body (multipart uploads); build a fresh one for every attempt. */
  body?: string | Buffer | Readable;
  signal?: AbortLike;
  /**
   * Connect only to public addresses (src/upstream/address-guard.ts): for URLs a provider handed
   * over rather than the channel's own base_url. A refused address is an UpstreamFailure saying so.
   */
  publicOnly?: boolean;
  /** A W3C traceparent to send (the caller's span; absent when tracing is off). */
  traceparent?: string;
  /** The W3C tracestate to send beside the traceparent (the client's, passed on). */
  tracestate?: string;
}

/** A whole answer gathered by UpstreamClient.collect() (or an error answer's text read from a stream). */
export interface CollectedAnswer {
  readonly statusCode: number;
  readonly headers: IncomingHttpHeaders;
  /** The body as UTF-8 text ('' for a non-2xx answer whose body could not be read whole). */
  readonly text: string;
}

export class UpstreamClient {
  readonly agent: Agent;
  /** For `publicOnly` requests: every connection through the address guard (built on first use). */
  private guarded: Agent | null = null;
  /** Request URLs split into origin and path, as undici wants them (a few per channel; bounded). */
  private readonly targets = new Map<string, { origin: string; path: string }>();

  constructor(readonly timeouts: UpstreamTimeouts) {
    this.agent = new Agent({
      connect: { timeout: timeouts.connectMs },
      keepAliveTimeout: 30_000,
      keepAliveMaxTimeout: 60_000,
      connections: timeouts.maxConnections ?? 8192,
      pipelining: 1,
      headersTimeout: timeouts.firstByteMs,
      bodyTimeout: timeouts.idleMs,
    });
  }

  /**
   * Sends a request and returns the raw response (status, headers, body stream). Network-level
   * failures become UpstreamFailure; HTTP error statuses are returned for the adapter to map.
   */
  async send(opts: SendOptions): Promise<Dispatcher.ResponseData> {
    try {
      const res = await request(opts.url, {
        method: opts.method,
        headers: traced(opts),
        body: opts.body,
        // undici listens through addEventListener, which every AbortLike has.
        signal: opts.signal as AbortSignal | undefined,
        dispatcher: this.dispatcherFor(opts),
        headersTimeout: this.timeouts.firstByteMs,
        bodyTimeout: this.timeouts.idleMs,
      });
      setAnswerLimits(res, this.limits);
      return res;
    } catch (err) {
      throw toUpstreamFailure(err, opts.signal);
    }
  }

  /**
   * Sends a request and gathers its whole answer in memory, for callers that need all of it at
   * once (a non-streamed chat answer): the same request, timeouts, signal and failures as send()
   * followed by readText(), without a body stream in between. A 2xx body over the answer limit
   * tears the connection down and fails as `oversized`; a body that breaks fails as send() and
   * readText() would. A non-2xx answer resolves with its status and headers and its body text ('' when
   * the body could not be read whole), for the provider's error mapping (statusFailure()).
   */
  collect(opts: SendOptions & { body?: string | Buffer }): Promise<CollectedAnswer> {
    return this.dispatchWith(opts, (resolve, reject) => new Collector(this.limits.bodyBytes, opts.signal, resolve, reject));
  }

  /**
   * Sends a request whose answer is read as it arrives (a streamed chat answer), through undici's
   * `dispatch` with a handler of its own (UpstreamStream): no body stream, no async iterator. Resolves
   * once the status and headers are in; the body is then pulled chunk by chunk with `next()`. The
   * same request, timeouts (first byte, and the gap between chunks while the reader waits), signal
   * and failures as send().
   */
  openStream(opts: SendOptions & { body?: string | Buffer }): Promise<UpstreamStream> {
    return this.dispatchWith(opts, (resolve, reject) => new UpstreamStream(this.limits, opts.signal, resolve, reject));
  }

  /**
   * collect() and openStream(): the request dispatched with a handler of theirs, which settles the
   * promise. A signal already aborted, a URL undici cannot take, or a dispatch that throws fail it
   * as send() would.
   */
  private dispatchWith<T>(
    opts: SendOptions & { body?: string | Buffer },
    handler: (resolve: (value: T) => void, reject: (err: UpstreamFailure) => void) => Dispatcher.DispatchHandler,
  ): Promise<T> {
    const signal = opts.signal;
    if (signal?.aborted) return Promise.reject(toUpstreamFailure(signal.reason, signal));
    let target: { origin: string; path: string };
    try {
      target = this.targetOf(opts.url);
    } catch (err) {
      return Promise.reject(toUpstreamFailure(err, signal));
    }
    const dispatchOpts: Dispatcher.DispatchOptions = {
      origin: target.origin,
      path: target.path,
      method: opts.method,
      headers: traced(opts),
      body: opts.body,
      headersTimeout: this.timeouts.firstByteMs,
      bodyTimeout: this.timeouts.idleMs,
    };
    const dispatcher = this.dispatcherFor(opts);
    return new Promise<T>((resolve, reject) => {
      try {
        dispatcher.dispatch(dispatchOpts, handler(resolve, reject));
      } catch (err) {
        reject(toUpstreamFailure(err, signal));
      }
    });
  }

  /** A request URL split into origin and path (cached; throws for a URL undici cannot take). */
  private targetOf(url: string): { origin: string; path: string } {
    let target = this.targets.get(url);
    if (!target) {
      target = splitUrl(url);
      if (this.targets.size >= 256) this.targets.clear();
      this.targets.set(url, target);
    }
    return target;
  }

  get limits(): AnswerLimits {
    return this.timeouts.answerLimits ?? DEFAULT_ANSWER_LIMITS;
  }

  private dispatcherFor(opts: SendOptions): Dispatcher {
    return opts.publicOnly ? (this.guarded ??= guardedAgent({ connectTimeoutMs: this.timeouts.connectMs })) : this.agent;
  }

  async close(): Promise<void> {
    await Promise.all([this.agent.close(), this.guarded?.close()]);
  }
}

/**
 * The request's headers with its `traceparent` and `tracestate` (W3C Trace Context), so the
 * provider's side joins the trace.
 */
function traced(opts: SendOptions): Record<string, string> {
  if (!opts.traceparent) return opts.headers;
  const headers: Record<string, string> = { ...opts.headers, traceparent: opts.traceparent };
  if (opts.tracestate) headers.tracestate = opts.tracestate;
  return headers;
}

/** An absolute http(s) URL as undici's dispatch takes it (what undici's request() makes of it). */
function splitUrl(raw: string): { origin: string; path: string } {
  const url = new URL(raw);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`unsupported protocol ${url.protocol}`);
  return { origin: url.origin, path: url.search ? `${url.pathname}${url.search}` : url.pathname };
}

/**
 * The dispatch handler behind collect(), on undici's dispatch handler API (onRequestStart …
 * onResponseError): the body's chunks are gathered and the promise is settled once. The client's
 * departure signal aborts the request at once (before it was connected: as soon as it is); the
 * failure is then `aborted`, mapped by toUpstreamFailure like every other.
 */
class Collector implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | null = null;
  private status = 0;
  private headers: IncomingHttpHeaders = {};
  private chunks: Buffer[] = [];
  private size = 0;
  /** Why the gateway aborted the request itself (an answer over the limit). */
  private failure: UpstreamFailure | null = null;
  private settled = false;

  constructor(
    private readonly max: number,
    private readonly signal: AbortLike | undefined,
    private readonly resolve: (answer: CollectedAnswer) => void,
    private readonly reject: (err: UpstreamFailure) => void,
  ) {
    // Not removed once settled: the signal lives no longer than its request, and a settled
    // collector ignores it.
    if (signal) signal.addEventListener('abort', () => this.settled || this.controller?.abort(signal.reason as Error), { once: true });
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.signal?.aborted) controller.abort(this.signal.reason as Error);
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    if (statusCode < 200) return;
    this.status = statusCode;
    this.headers = headers;
    if (Number(headers['content-length']) > this.max) this.tooLarge(controller);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.settled) return;
    this.size += chunk.length;
    if (this.size > this.max) return this.tooLarge(controller);
    this.chunks.push(chunk);
  }

  onResponseEnd(): void {
    if (this.settled) return;
    const { chunks, size } = this;
    this.settle();
    const text = chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks, size).toString('utf8');
    this.resolve({ statusCode: this.status, headers: this.headers, text });
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    if (this.settled) return;
    this.settle();
    // An error status stays an error status whatever became of its body (the provider's mapping reads '').
    if (this.status >= 300) this.resolve({ statusCode: this.status, headers: this.headers, text: '' });
    else this.reject(this.failure ?? toUpstreamFailure(err, this.signal));
  }

  /** Over the limit: hang up on the upstream (onResponseError follows). */
  private tooLarge(controller: Dispatcher.DispatchController): void {
    this.failure = oversized('the upstream answer', this.max);
    controller.abort(this.failure);
  }

  private settle(): void {
    this.settled = true;
    this.chunks = [];
  }
}

/** Where UpstreamStream.pushTo() delivers the body (SseReader is one). */
export interface ChunkSink {
  /** A chunk of the body; false: no more until the stream's resume(). */
  push(chunk: Buffer): boolean;
  /** The body ended. */
  end(): void;
  /** The body broke. */
  fail(err: unknown): void;
}

/** What a stream's reader may leave unread before the upstream socket is paused (undici's own body stream holds as much). */
const HELD_BYTES = 64 * 1024;

/**
 * A streamed upstream answer, and the dispatch handler that reads it (undici's dispatch handler
 * API, like Collector). The reader pulls: `next()` gives the next body chunk as it came off
 * the socket (or, when chunks arrived while nobody asked, all of them at once). Chunks held past
 * HELD_BYTES pause the socket (the controller's pause()) until the reader asks again, so a reader that
 * waits — for a slow client to drain — stops the upstream too; undici's idle timeout does not run
 * while paused. Or, after pushTo(), the chunks go to a sink as they arrive (no promise per chunk);
 * a sink that cannot take more pauses the socket until its resume(). The client's departure
 * signal aborts the request; cancel() aborts it for the gateway's own reasons; discard() reads
 * whatever is left without keeping it, so a finished answer's keep-alive connection goes back to
 * the pool.
 */
export class UpstreamStream implements Dispatcher.DispatchHandler {
  statusCode = 0;
  /** The Content-Type of the answer ('' when none). */
  contentType = '';
  private controller: Dispatcher.DispatchController | null = null;
  /** Kept only for an error status (for the provider's error mapping). */
  private errorHeaders: IncomingHttpHeaders | null = null;
  private opened: ((stream: UpstreamStream) => void) | null;
  private openFailed: ((err: UpstreamFailure) => void) | null;
  /** Chunks that arrived while nobody asked, and their bytes (past HELD_BYTES the socket is paused). */
  private held: Buffer[] | null = null;
  private heldBytes = 0;
  private paused = false;
  /** The reader's next() waiting for a chunk. */
  private waitResolve: ((chunk: Buffer | null) => void) | null = null;
  private waitReject: ((err: UpstreamFailure) => void) | null = null;
  /** The body ended (`failure` null) or broke. */
  private done = false;
  private failure: UpstreamFailure | null = null;
  /** 'read': next() pulls; 'push': to `sink`; 'text': gathering the rest for text(); 'drop': discard() or cancel(). */
  private mode: 'read' | 'push' | 'text' | 'drop' = 'read';
  private sink: ChunkSink | null = null;
  /** Push: the sink refused a chunk; what comes meanwhile is held (the socket paused) until resume(). */
  private stalled = false;
  private textChunks: Buffer[] | null = null;
  private textSize = 0;
  private textDone: ((text: string) => void) | null = null;

  constructor(
    readonly limits: AnswerLimits,
    private readonly signal: AbortLike | undefined,
    opened: (stream: UpstreamStream) => void,
    openFailed: (err: UpstreamFailure) => void,
  ) {
    this.opened = opened;
    this.openFailed = openFailed;
    // Not removed when done (as in Collector): the signal lives no longer than its request.
    if (signal) signal.addEventListener('abort', () => this.done || this.controller?.abort(signal.reason as Error), { once: true });
  }

  /** The response headers (kept only for an error status; {} otherwise). */
  get headers(): IncomingHttpHeaders {
    return this.errorHeaders ?? {};
  }

  /**
   * The next body chunk, or null at the end of the body. Rejects with an UpstreamFailure when the
   * body broke (timeout, reset, the client's departure); one call at a time.
   */
  next(): Promise<Buffer | null> {
    const held = this.held;
    if (held) {
      const chunk = held.length === 1 ? held[0] : Buffer.concat(held, this.heldBytes);
      this.held = null;
      this.heldBytes = 0;
      if (this.paused) {
        this.paused = false;
        this.controller?.resume();
      }
      return Promise.resolve(chunk);
    }
    if (this.done) return this.failure ? Promise.reject(this.failure) : Promise.resolve(null);
    return new Promise((resolve, reject) => {
      this.waitResolve = resolve;
      this.waitReject = reject;
    });
  }

  /**
   * The rest of the body as UTF-8 text, for an answer that is not a stream (an error status): up to
   * the answer limit; '' when it broke or was larger (the connection is then torn down).
   */
  text(): Promise<string> {
    if (this.mode !== 'read') return Promise.resolve('');
    this.mode = 'text';
    if (this.held) for (const chunk of this.held) this.keepText(chunk);
    this.dropHeld();
    if (this.done) return Promise.resolve(this.failure ? '' : this.takeText());
    return new Promise((resolve) => {
      this.textDone = resolve;
    });
  }

  /**
   * From now on the body goes to `sink` as it arrives: first what is held, then every chunk as it
   * comes off the socket, then the end or the failure (once). A chunk the sink refuses (data()
   * answered false) pauses the socket until resume(); the end or failure waits for it too.
   */
  pushTo(sink: ChunkSink): void {
    if (this.mode !== 'read') return;
    this.mode = 'push';
    this.sink = sink;
    this.stalled = true;
    this.resume();
  }

  /** Push: the sink takes chunks again (what was held goes first, then the socket reads on). */
  resume(): void {
    const sink = this.sink;
    if (this.mode !== 'push' || !this.stalled || !sink) return;
    this.stalled = false;
    const held = this.held;
    if (held) {
      const chunk = held.length === 1 ? held[0] : Buffer.concat(held, this.heldBytes);
      this.held = null;
      this.heldBytes = 0;
      const more = sink.push(chunk);
      if (this.mode !== 'push') return;
      if (!more) {
        this.stalled = true;
        return;
      }
    }
    if (this.done) {
      this.sink = null;
      if (this.failure) sink.fail(this.failure);
      else sink.end();
      return;
    }
    if (this.paused) {
      this.paused = false;
      this.controller?.resume();
    }
  }

  /** Reads the rest of the body without keeping it (the connection can then be reused). */
  discard(): void {
    if (this.mode === 'drop') return;
    this.mode = 'drop';
    this.sink = null;
    this.dropHeld();
  }

  /** Stops the answer: the request is aborted (its connection closed) unless it already ended. */
  cancel(): void {
    this.mode = 'drop';
    this.sink = null;
    this.held = null;
    this.heldBytes = 0;
    if (this.done) return;
    this.done = true;
    this.controller?.abort(new Error('the gateway stopped reading the upstream stream'));
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.signal?.aborted) controller.abort(this.signal.reason as Error);
    else if (this.done) controller.abort(new Error('the gateway stopped reading the upstream stream'));
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    if (statusCode < 200) return;
    this.statusCode = statusCode;
    const type = headers['content-type'];
    this.contentType = typeof type === 'string' ? type : '';
    if (statusCode >= 300) this.errorHeaders = headers;
    const opened = this.opened;
    this.opened = this.openFailed = null;
    opened?.(this);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.mode === 'drop') return;
    if (this.mode === 'text') return this.keepText(chunk);
    if (this.mode === 'push' && !this.stalled) {
      if (this.sink!.push(chunk) || this.mode !== 'push') return;
      this.stalled = true;
      return this.pause(controller);
    }
    const resolve = this.waitResolve;
    if (resolve) {
      this.waitResolve = this.waitReject = null;
      return resolve(chunk);
    }
    (this.held ??= []).push(chunk);
    this.heldBytes += chunk.length;
    // Holding a little keeps pauses rare: a paused socket still reads into undici's own buffer,
    // and every resume re-reads that buffer whole.
    if (this.stalled || this.heldBytes >= HELD_BYTES) this.pause(controller);
  }

  onResponseEnd(): void {
    if (this.done) return;
    this.done = true;
    if (this.mode === 'text') return this.textDone?.(this.takeText());
    if (this.mode === 'push') return this.settleSink();
    const resolve = this.waitResolve;
    this.waitResolve = this.waitReject = null;
    resolve?.(null);
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    const openFailed = this.openFailed;
    if (openFailed) {
      this.opened = this.openFailed = null;
      this.done = true;
      return openFailed(toUpstreamFailure(err, this.signal));
    }
    if (this.done) return;
    this.done = true;
    if (this.mode === 'text') {
      this.textChunks = null;
      return this.textDone?.('');
    }
    this.failure = toUpstreamFailure(err, this.signal);
    if (this.mode === 'push') return this.settleSink();
    const reject = this.waitReject;
    this.waitResolve = this.waitReject = null;
    reject?.(this.failure);
  }

  private pause(controller: Dispatcher.DispatchController): void {
    this.paused = true;
    controller.pause();
  }

  /** Push: the body ended or broke; the sink hears of it now, or (stalled) on resume(). */
  private settleSink(): void {
    const sink = this.sink;
    if (this.stalled || !sink) return;
    this.sink = null;
    if (this.failure) sink.fail(this.failure);
    else sink.end();
  }

  /** Forgets held chunks, and lets the socket read on if it was paused for them. */
  private dropHeld(): void {
    this.held = null;
    this.heldBytes = 0;
    if (this.paused && !this.done) {
      this.paused = false;
      this.controller?.resume();
    }
  }

  private keepText(chunk: Buffer): void {
    this.textSize += chunk.length;
    // Over the limit: hang up (onResponseError then answers '').
    if (this.textSize > this.limits.bodyBytes) this.controller?.abort(oversized('the upstream answer', this.limits.bodyBytes));
    else (this.textChunks ??= []).push(chunk);
  }

  private takeText(): string {
    const chunks = this.textChunks;
    this.textChunks = null;
    if (!chunks) return '';
    return chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks, this.textSize).toString('utf8');
  }
}

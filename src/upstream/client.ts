import type { IncomingHttpHeaders } from 'node:http';
import { Readable } from 'node:stream';
import { Agent, request, util as undiciUtil, type Dispatcher } from './undici.js';
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
}

/** A whole answer gathered by UpstreamClient.collect(). */
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
        headers: opts.headers,
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
   * the body could not be read whole), for the provider's error mapping (asResponseData()).
   */
  collect(opts: SendOptions & { body?: string | Buffer }): Promise<CollectedAnswer> {
    const signal = opts.signal;
    if (signal?.aborted) return Promise.reject(toUpstreamFailure(signal.reason, signal));
    let target = this.targets.get(opts.url);
    if (!target) {
      try {
        target = splitUrl(opts.url);
      } catch (err) {
        return Promise.reject(toUpstreamFailure(err, signal));
      }
      if (this.targets.size >= 256) this.targets.clear();
      this.targets.set(opts.url, target);
    }
    const dispatchOpts: Dispatcher.DispatchOptions = {
      origin: target.origin,
      path: target.path,
      method: opts.method,
      headers: opts.headers,
      body: opts.body,
      headersTimeout: this.timeouts.firstByteMs,
      bodyTimeout: this.timeouts.idleMs,
    };
    const dispatcher = this.dispatcherFor(opts);
    return new Promise<CollectedAnswer>((resolve, reject) => {
      try {
        dispatcher.dispatch(dispatchOpts, new Collector(this.limits.bodyBytes, signal, resolve, reject));
      } catch (err) {
        reject(toUpstreamFailure(err, signal));
      }
    });
  }

  /** A collected non-2xx answer as the response data the providers' error mapping reads. */
  asResponseData(answer: CollectedAnswer): Dispatcher.ResponseData {
    const res = {
      statusCode: answer.statusCode,
      statusText: '',
      headers: answer.headers,
      trailers: {},
      opaque: null,
      context: {},
      body: Readable.from(answer.text ? [Buffer.from(answer.text, 'utf8')] : []),
    } as unknown as Dispatcher.ResponseData;
    setAnswerLimits(res, this.limits);
    return res;
  }

  private get limits(): AnswerLimits {
    return this.timeouts.answerLimits ?? DEFAULT_ANSWER_LIMITS;
  }

  private dispatcherFor(opts: SendOptions): Dispatcher {
    return opts.publicOnly ? (this.guarded ??= guardedAgent({ connectTimeoutMs: this.timeouts.connectMs })) : this.agent;
  }

  async close(): Promise<void> {
    await Promise.all([this.agent.close(), this.guarded?.close()]);
  }
}

/** An absolute http(s) URL as undici's dispatch takes it (what undici's request() makes of it). */
function splitUrl(raw: string): { origin: string; path: string } {
  const url = new URL(raw);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`unsupported protocol ${url.protocol}`);
  return { origin: url.origin, path: url.search ? `${url.pathname}${url.search}` : url.pathname };
}

/**
 * The dispatch handler behind collect(), on undici's raw handler interface (onConnect … onError):
 * the response headers arrive unparsed and are parsed only when asked for (an error status), the
 * body's chunks are gathered, and the promise is settled once. The client's departure signal
 * aborts the request at once (before it was connected: as soon as it is); the failure is then
 * `aborted`, mapped by toUpstreamFailure like every other.
 */
class Collector implements Dispatcher.DispatchHandler {
  private abort: ((err?: Error) => void) | null = null;
  private status = 0;
  private rawHeaders: Buffer[] = [];
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
    // Not removed once settled (removing an EventTarget listener costs about as much as adding
    // it): the signal lives no longer than its request, and a settled collector ignores it.
    if (signal) signal.addEventListener('abort', () => this.settled || this.abort?.(signal.reason as Error), { once: true });
  }

  onConnect(abort: (err?: Error) => void): void {
    if (this.signal?.aborted) return abort(this.signal.reason as Error);
    this.abort = abort;
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[]): boolean {
    if (statusCode < 200) return true;
    this.status = statusCode;
    this.rawHeaders = rawHeaders;
    if (contentLengthOf(rawHeaders) > this.max) return this.tooLarge();
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.settled) return false;
    this.size += chunk.length;
    if (this.size > this.max) return this.tooLarge();
    this.chunks.push(chunk);
    return true;
  }

  onComplete(): void {
    if (this.settled) return;
    const { chunks, size } = this;
    this.settle();
    this.resolve(new Collected(this.status, this.rawHeaders, chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks, size).toString('utf8')));
  }

  onError(err: Error): void {
    if (this.settled) return;
    this.settle();
    // An error status stays an error status whatever became of its body (the provider's mapping reads '').
    if (this.status >= 300) this.resolve(new Collected(this.status, this.rawHeaders, ''));
    else this.reject(this.failure ?? toUpstreamFailure(err, this.signal));
  }

  /** Over the limit: hang up on the upstream (onError follows). */
  private tooLarge(): false {
    this.failure = oversized('the upstream answer', this.max);
    this.abort?.(this.failure);
    return false;
  }

  private settle(): void {
    this.settled = true;
    this.chunks = [];
  }
}

/** A collected answer; its headers are parsed on first read. */
class Collected implements CollectedAnswer {
  private parsed: IncomingHttpHeaders | null = null;

  constructor(
    readonly statusCode: number,
    private readonly rawHeaders: Buffer[],
    readonly text: string,
  ) {}

  get headers(): IncomingHttpHeaders {
    return (this.parsed ??= undiciUtil.parseHeaders(this.rawHeaders) as IncomingHttpHeaders);
  }
}

/** The declared Content-Length among raw response headers (NaN when there is none). */
function contentLengthOf(rawHeaders: Buffer[]): number {
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i];
    if (name.length === 14 && undiciUtil.headerNameToString(name) === 'content-length') return Number(rawHeaders[i + 1].toString('latin1'));
  }
  return NaN;
}

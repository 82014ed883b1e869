import type { Readable } from 'node:stream';
import { Agent, errors as undiciErrors, request, type Dispatcher } from 'undici';

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
}

export type FailureKind = 'connect' | 'timeout' | 'status' | 'malformed' | 'aborted';

/** An upstream call that did not produce a usable answer. `retryable`: another channel may succeed. */
export class UpstreamFailure extends Error {
  constructor(
    readonly kind: FailureKind,
    message: string,
    readonly status = 0,
    /** The provider's own error code/type, when it sent one. */
    readonly providerCode = '',
    /** Seconds the provider asked us to wait (Retry-After), when it said. */
    readonly retryAfterS = 0,
  ) {
    super(message);
    this.name = 'UpstreamFailure';
  }

  get retryable(): boolean {
    if (this.kind === 'status') return this.status === 429 || this.status === 408 || this.status >= 500;
    return this.kind !== 'aborted';
  }
}

export class UpstreamClient {
  readonly agent: Agent;

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
  async send(opts: {
    url: string;
    method: Dispatcher.HttpMethod;
    headers: Record<string, string>;
    /** A Readable streams the body (multipart uploads); build a fresh one for every attempt. */
    body?: string | Buffer | Readable;
    signal?: AbortSignal;
  }): Promise<Dispatcher.ResponseData> {
    try {
      return await request(opts.url, {
        method: opts.method,
        headers: opts.headers,
        body: opts.body,
        signal: opts.signal,
        dispatcher: this.agent,
        headersTimeout: this.timeouts.firstByteMs,
        bodyTimeout: this.timeouts.idleMs,
      });
    } catch (err) {
      throw toUpstreamFailure(err, opts.signal);
    }
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}

/** Maps undici / socket errors to an UpstreamFailure. */
export function toUpstreamFailure(err: unknown, signal?: AbortSignal): UpstreamFailure {
  if (err instanceof UpstreamFailure) return err;
  if (signal?.aborted) return new UpstreamFailure('aborted', 'the client went away');
  if (err instanceof undiciErrors.HeadersTimeoutError || err instanceof undiciErrors.BodyTimeoutError) {
    return new UpstreamFailure('timeout', 'the upstream did not answer in time');
  }
  if (err instanceof undiciErrors.ConnectTimeoutError) return new UpstreamFailure('timeout', 'connecting to the upstream timed out');
  const code = (err as NodeJS.ErrnoException)?.code ?? '';
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EHOSTUNREACH') {
    return new UpstreamFailure('connect', `cannot connect to the upstream (${code})`);
  }
  return new UpstreamFailure('connect', `the upstream connection failed${code ? ` (${code})` : ''}`);
}

/** Reads a whole response body as text, mapping a broken or timed-out body to UpstreamFailure. */
export async function readText(res: Dispatcher.ResponseData, signal?: AbortSignal): Promise<string> {
  try {
    return await res.body.text();
  } catch (err) {
    throw toUpstreamFailure(err, signal);
  }
}

/** Reads a JSON body; anything unparsable is a `malformed` failure. */
export async function readJsonBody(res: Dispatcher.ResponseData, signal?: AbortSignal): Promise<unknown> {
  return parseUpstreamJson(await readText(res, signal), res.statusCode);
}

/** Parses an upstream answer's text; anything unparsable is a `malformed` failure (retryable). */
export function parseUpstreamJson(text: string, status: number): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new UpstreamFailure('malformed', 'the upstream answered with malformed JSON', status);
  }
}

/**
 * Turns a provider's non-2xx answer into an UpstreamFailure. `pick` reads the provider's error body
 * (already parsed; undefined when it was not JSON) for its message and code.
 */
export async function statusFailure(
  res: Dispatcher.ResponseData,
  pick: (body: any) => { message?: unknown; code?: unknown },
): Promise<UpstreamFailure> {
  const text = await readText(res).catch(() => '');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const { message, code } = body && typeof body === 'object' ? pick(body) : {};
  return new UpstreamFailure(
    'status',
    typeof message === 'string' && message ? message : `HTTP ${res.statusCode}`,
    res.statusCode,
    typeof code === 'string' ? code : '',
    retryAfterSeconds(res.headers),
  );
}

export function retryAfterSeconds(headers: Dispatcher.ResponseData['headers']): number {
  const v = headers['retry-after'];
  const s = Number(Array.isArray(v) ? v[0] : v);
  return Number.isFinite(s) && s > 0 ? Math.ceil(s) : 0;
}

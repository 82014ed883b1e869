import type { Readable } from 'node:stream';
import { Agent, request, type Dispatcher } from 'undici';
import { guardedAgent } from './address-guard.js';
import { toUpstreamFailure } from './failure.js';
import { DEFAULT_ANSWER_LIMITS, setAnswerLimits, type AnswerLimits } from './json.js';

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

export class UpstreamClient {
  readonly agent: Agent;
  /** For `publicOnly` requests: every connection through the address guard (built on first use). */
  private guarded: Agent | null = null;

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
    /**
     * Connect only to public addresses (src/upstream/address-guard.ts): for URLs a provider handed
     * over rather than the channel's own base_url. A refused address is an UpstreamFailure saying so.
     */
    publicOnly?: boolean;
  }): Promise<Dispatcher.ResponseData> {
    try {
      const res = await request(opts.url, {
        method: opts.method,
        headers: opts.headers,
        body: opts.body,
        signal: opts.signal,
        dispatcher: opts.publicOnly ? (this.guarded ??= guardedAgent({ connectTimeoutMs: this.timeouts.connectMs })) : this.agent,
        headersTimeout: this.timeouts.firstByteMs,
        bodyTimeout: this.timeouts.idleMs,
      });
      setAnswerLimits(res, this.timeouts.answerLimits ?? DEFAULT_ANSWER_LIMITS);
      return res;
    } catch (err) {
      throw toUpstreamFailure(err, opts.signal);
    }
  }

  async close(): Promise<void> {
    await Promise.all([this.agent.close(), this.guarded?.close()]);
  }
}

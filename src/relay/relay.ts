import type { ChannelConfig, Config } from '../config/schema.js';
import { GatewayError, errors } from '../http/errors.js';
import type { CatalogModel } from './catalog.js';
import { CircuitBreaker } from './breaker.js';
import { UpstreamFailure } from '../upstream/failure.js';
import { targetFor, type Target } from '../upstream/target.js';
import type { AttemptOutcome, ChannelHealth } from './health.js';
import type { TraceParent } from '../telemetry/trace.js';
import { endAttempt, failAttempt, startAttempt, type Attempt } from '../telemetry/genai.js';

export interface RunOptions {
  /** Whether another attempt is still allowed (false once bytes went to the client). */
  canRetry?: () => boolean;
  /** Called after each failed attempt (for logging and metrics). */
  onFailure?: (target: Target, failure: UpstreamFailure) => void;
  /**
   * Tracing: takes the span of the attempt that answered, to end it once the answer is used (with
   * its usage and cost); without it the span ends when the attempt returns.
   */
  keepAttempt?: (attempt: Attempt) => void;
  /** Tracing: the key whose request this is, on every attempt's span. */
  keyId?: string;
  /** Tracing: the request's server span, parent of every attempt (null or absent: tracing off). */
  trace?: TraceParent | null;
}

/**
 * Channel choice, retries and circuit breakers. Channels are tried by priority (lower first),
 * weighted at random within one priority; a failed attempt moves to the next channel while the
 * failure is retryable (connect error, timeout, 5xx, 429, malformed answer) and nothing has been
 * sent to the client.
 */
export class Relay {
  private readonly breakers = new Map<string, CircuitBreaker>();

  constructor(
    private readonly settings: Config['relay'],
    /** Sees every failed attempt of every request (metrics). */
    private readonly observe?: (target: Target, failure: UpstreamFailure) => void,
    /** Sees every attempt's outcome and duration (the admin API's statistics, the channel's health). */
    private readonly attempted?: (channel: string, outcome: AttemptOutcome, ms: number, error?: string) => void,
    /** Channels taken out of rotation by their health are skipped. */
    private readonly health?: ChannelHealth,
  ) {}

  breaker(channel: string): CircuitBreaker {
    let b = this.breakers.get(channel);
    if (!b) {
      b = new CircuitBreaker(this.settings.breaker_failures, this.settings.breaker_cooldown_ms);
      this.breakers.set(channel, b);
    }
    return b;
  }

  /** Every channel's breaker state (channels never tried have none: closed). */
  breakerStates(): [string, 'closed' | 'open' | 'half_open'][] {
    return [...this.breakers].map(([channel, b]) => [channel, b.state()]);
  }

  /** The model's channels in the order they should be tried. */
  order(model: CatalogModel, random = Math.random): readonly ChannelConfig[] {
    const chans = model.channels; // sorted by priority already
    // One channel (the common case): nothing to choose, no arrays per request.
    if (chans.length <= 1) return chans;
    const out: ChannelConfig[] = [];
    let i = 0;
    while (i < chans.length) {
      let j = i;
      while (j < chans.length && chans[j].priority === chans[i].priority) j++;
      const group = chans.slice(i, j);
      while (group.length) {
        const total = group.reduce((s, c) => s + c.weight, 0);
        let r = random() * total;
        let k = 0;
        while (k < group.length - 1 && r >= group[k].weight) r -= group[k++].weight;
        out.push(group.splice(k, 1)[0]);
      }
      i = j;
    }
    return out;
  }

  async run<T>(model: CatalogModel, attempt: (target: Target) => Promise<T>, opts: RunOptions = {}): Promise<T> {
    const order = this.order(model);
    let last: UpstreamFailure | undefined;
    // Each failed attempt's channel, for the request's log line (docs/errors.md: "Upstream failures").
    const failed: { channel: string; kind: string; error: string }[] = [];
    let all429 = true;
    let maxRetryAfter = 0;
    let tried = 0;
    for (const channel of order) {
      if (tried >= this.settings.max_attempts) break;
      if (this.health && !this.health.inRotation(channel.name)) continue;
      const breaker = this.breaker(channel.name);
      if (!breaker.tryAcquire()) continue;
      tried++;
      const target = targetFor(channel, model.id);
      const started = performance.now();
      // Each attempt is a span of its own (siblings under the request, when it is sampled); the
      // upstream request carries its traceparent (target.traceparent).
      const traced = opts.trace ? startAttempt(opts.trace, model.config.kind, model.id, target, tried, opts.keyId) : null;
      if (traced) {
        target.traceparent = traced.traceparent;
        target.tracestate = traced.tracestate || undefined;
      }
      try {
        const result = await attempt(target);
        breaker.success();
        this.attempted?.(channel.name, 'ok', performance.now() - started);
        if (traced) {
          if (opts.keepAttempt) opts.keepAttempt(traced);
          else endAttempt(traced, model.config.kind, { status: 200 });
        }
        return result;
      } catch (err) {
        if (traced) failAttempt(traced, err);
        this.attempted?.(channel.name, outcomeOf(err), performance.now() - started, err instanceof UpstreamFailure ? `${err.kind}${err.status ? ` ${err.status}` : ''}: ${err.message}` : undefined);
        if (!(err instanceof UpstreamFailure)) {
          breaker.success();
          throw err;
        }
        last = err;
        failed.push({ channel: channel.name, kind: err.kind, error: err.message });
        this.observe?.(target, err);
        opts.onFailure?.(target, err);
        if (err.kind === 'aborted') throw err;
        if (err.kind === 'status' && err.status === 429) {
          // A busy provider is not a broken one: no breaker penalty.
          breaker.success();
          maxRetryAfter = Math.max(maxRetryAfter, err.retryAfterS);
        } else {
          all429 = false;
          if (err.retryable) breaker.failure();
          else breaker.success();
        }
        if (!err.retryable || (opts.canRetry && !opts.canRetry())) break;
      }
    }
    if (!last) throw errors.noAvailableChannel(model.id);
    const answer = failureToGatewayError(last, all429, maxRetryAfter);
    answer.logFields = { model: model.id, channels: failed };
    throw answer;
  }
}

/**
 * Whether a failed attempt counts against its channel. Not the upstream's fault: a bad request
 * caught late, a client gone, a 4xx the provider judged the request's (400, 413, 422 …), and a busy
 * provider (429). The channel's fault: no answer, a timeout, a 5xx, a malformed answer, refused
 * credentials (401, 403) and an unknown model (404: the channel's model names are wrong).
 */
export function outcomeOf(err: unknown): AttemptOutcome {
  if (!(err instanceof UpstreamFailure) || err.kind === 'aborted') return 'not_counted';
  if (err.kind === 'status' && err.status >= 400 && err.status < 500 && ![401, 403, 404].includes(err.status)) return 'not_counted';
  return 'error';
}

/** The gateway's answer for an upstream failure (status table of docs/errors.md). */
export function failureToGatewayError(f: UpstreamFailure, all429 = f.status === 429, retryAfterS = f.retryAfterS): GatewayError {
  if (f.kind === 'status' && f.status === 429 && all429) {
    const after = String(Math.max(1, retryAfterS));
    return new GatewayError(429, 'rate_limit_exceeded', 'Every upstream channel for this model is rate limited; retry later.', { 'retry-after': after });
  }
  if (f.kind === 'timeout') return errors.upstreamTimeout();
  if (f.kind === 'status' && f.status >= 400 && f.status < 500 && f.status !== 429) {
    if (f.status === 401 || f.status === 403) return errors.upstreamError('The upstream provider rejected the gateway\'s credentials for this channel.');
    if (f.status === 404) return errors.upstreamError('The upstream provider does not know this model.');
    if (f.status === 413) return new GatewayError(413, 'request_too_large', `The upstream provider refused the request as too large: ${f.message}`);
    // The provider judged the request itself invalid: the client can fix it.
    return new GatewayError(400, 'invalid_request', `The upstream provider rejected the request: ${f.message}`);
  }
  if (f.kind === 'malformed') return errors.upstreamError('The upstream provider answered with a malformed response.');
  return errors.upstreamError(`The upstream provider failed: ${f.message}`);
}

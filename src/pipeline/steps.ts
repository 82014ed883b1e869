import sjson from 'secure-json-parse';
import { errors, GatewayError } from '../http/errors.js';
import { errorAnswer, invalidJson } from '../http/error-answer.js';
import { clientGone, watchDeparture, whenClosed } from '../http/departure.js';
import { JSON_PARSE_OPTIONS } from '../http/json-field.js';
import { MAX_JSON_DEPTH, depthExceeds, tooDeep, tooLarge } from '../http/request-guards.js';
import type { Metrics } from '../http/metrics.js';
import type { Principal } from '../auth/principal.js';
import { presentedKey, type Authenticator } from '../auth/authenticator.js';
import { admitKeyLimits, limitModelIn, namesLimitedModel, type LimitContext } from '../limits/hook.js';
import { recordBackstop, watchUnrouted } from '../limits/usage-backstop.js';
import type { UsageLedger } from '../limits/ledger.js';
import type { GatewayRequest, Reply } from './request.js';
import type { Validate } from './request.js';
import { requestEnd, requestStart } from './diagnostics.js';

// THE request pipeline: every request the gateway serves, whatever its route, family or body,
// passes these steps in this order, in this one file (Exchange below):
//
//   guards → departure watch → key → key limits → route steps → body → schema → model limits →
//   handler → answer → (when the response closes) metrics, usage backstop, diagnostics
//
// A step that refuses answers through errorAnswer() in the path's family shape. Each step calls
// the next itself: a step whose work is synchronous (a cached key, limits kept in memory, a body
// that already arrived) costs no promise; one that waits hands its continuation to the promise.

export interface PipelineDeps {
  authenticator: Authenticator;
  limits: LimitContext;
  ledger: Pick<UsageLedger, 'record'>;
  metrics: Metrics;
  /** server.body_limit_mb in bytes. */
  bodyLimit: number;
}

const DIGITS = /^\d+$/;
const CHUNKED_LAST = /(?:^|,)[ \t]*chunked[ \t]*$/i;

/** The ledger endpoint of a request's route: its billable name, else its pattern. */
export function ledgerEndpointOf(request: GatewayRequest): string {
  const route = request.route;
  return route?.options.billable ?? route?.url ?? '';
}

/**
 * Counts the request against `model`'s rpm, once per request; throws 429 when over. For routes
 * whose model is not in a JSON body (multipart forms, a Gemini path): the model-limits step counts
 * a JSON body's model itself.
 */
export async function limitModel(request: GatewayRequest, model: string): Promise<void> {
  if (!request.limits) return;
  return limitModelIn(request.limits, request, ledgerEndpointOf(request), model);
}

/** One request through the pipeline. */
export class Exchange {
  constructor(
    private readonly deps: PipelineDeps,
    private readonly request: GatewayRequest,
    private readonly reply: Reply,
  ) {}

  /**
   * From the top. `unrouted` answers a request no route takes (after the guards); `closing`: the app
   * is shutting down, so the request is answered 503 `shutting_down`, `Retry-After: 1`, and its
   * connection closed after the answer.
   */
  run(unrouted: (() => GatewayError) | null, closing: boolean): void {
    const { request } = this;
    requestStart(request);
    if (closing) {
      this.reply.header('connection', 'close');
      unrouted = errors.shuttingDown;
    }
    // guards
    const refused = closing ? null : this.guards();
    // departure watch: everything that runs when the response closes hangs on its one listener.
    watchDeparture(request, this.reply.raw);
    whenClosed(request, () => this.closed());
    if (refused) return this.fail(refused);
    if (unrouted) return this.fail(unrouted());
    watchUnrouted(request, this.reply.raw, () => this.departed());
    this.key();
  }

  /** A declared body over the limit, or one framed by a coding the server cannot read: refused before a byte is read. */
  private guards(): GatewayError | null {
    const h = this.request.headers;
    const declared = h['content-length'];
    if (declared !== undefined && DIGITS.test(declared) && Number(declared) > this.bodyLimit()) return tooLarge();
    const coding = h['transfer-encoding'];
    if (coding !== undefined && !CHUNKED_LAST.test(coding)) {
      return new GatewayError(400, 'invalid_request', "The request's Transfer-Encoding must end in chunked; no other transfer coding is accepted.");
    }
    return null;
  }

  private bodyLimit(): number {
    return this.request.route?.options.bodyLimit ?? this.deps.bodyLimit;
  }

  /** key: an application key on `auth` routes. */
  private key(): void {
    const { request } = this;
    if (!request.route!.options.auth) return this.routeSteps(0);
    let found;
    try {
      found = this.deps.authenticator.resolve(presentedKey(request.headers) ?? queryKey(request));
    } catch (err) {
      return this.fail(err);
    }
    if (found instanceof Promise)
      found.then(
        (principal) => this.keyLimits(principal),
        (err: unknown) => this.fail(err),
      );
    else this.keyLimits(found);
  }

  /** key limits: the key's rpm and concurrency (its slot freed when the response closes). */
  private keyLimits(principal: Principal | null): void {
    if (!principal) return this.fail(errors.invalidApiKey());
    this.request.principal = principal;
    admitKeyLimits(this.deps.limits, this.request, ledgerEndpointOf(this.request), this.reply, (err) => (err ? this.fail(err) : this.routeSteps(0)));
  }

  /** route steps: what a route adds before its body is read (the admin check, a model named in the path). */
  private routeSteps(from: number): void {
    const steps = this.request.route!.steps;
    for (let i = from; i < steps.length; i++) {
      let done;
      try {
        done = steps[i](this.request, this.reply);
      } catch (err) {
        return this.fail(err);
      }
      if (this.reply.sent) return;
      if (done instanceof Promise) {
        done.then(
          () => (this.reply.sent ? undefined : this.routeSteps(i + 1)),
          (err: unknown) => this.fail(err),
        );
        return;
      }
    }
    this.body();
  }

  /** body: JSON (or text) read whole within the limit; a multipart form is left for the route to read. */
  private body(): void {
    const { request } = this;
    const route = request.route!;
    const method = request.method;
    if (method === 'GET' || method === 'HEAD') return this.schema();
    const h = request.headers;
    const type = h['content-type'];
    if (type === undefined) {
      // Nothing to parse: no body at all.
      if (h['transfer-encoding'] === undefined && (h['content-length'] === undefined || h['content-length'] === '0')) return this.schema();
      return this.fail(errors.invalidRequest('The request body must be JSON (Content-Type: application/json).'));
    }
    const kind = mediaKind(type);
    if (kind === 'multipart' && route.multipart) return this.schema();
    if (kind !== 'json' && kind !== 'text') {
      this.reply.header('connection', 'close');
      return this.fail(new GatewayError(400, 'invalid_request', 'The request body must be JSON (Content-Type: application/json).'));
    }
    const raw = request.raw;
    const limit = this.bodyLimit();
    const declared = h['content-length'];
    const chunks: Buffer[] = [];
    let received = 0;
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received > limit) {
        stop();
        this.reply.header('connection', 'close');
        return this.fail(tooLarge());
      }
      chunks.push(chunk);
    };
    const onError = () => {
      stop();
      this.reply.header('connection', 'close');
      this.fail(new GatewayError(400, 'invalid_request', 'The request body could not be read.'));
    };
    const onEnd = () => {
      stop();
      if (declared !== undefined && Number(declared) !== received) {
        this.reply.header('connection', 'close');
        return this.fail(new GatewayError(400, 'invalid_request', 'The Content-Length header does not match the body.'));
      }
      const text = chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks, received).toString('utf8');
      if (kind === 'text') {
        request.body = text;
        return this.schema();
      }
      if (text === '') return this.fail(new GatewayError(400, 'invalid_request', 'The request body is empty; a JSON object is required.'));
      try {
        request.body = sjson.parse(text, JSON_PARSE_OPTIONS);
      } catch {
        this.reply.header('connection', 'close');
        return this.fail(invalidJson());
      }
      this.schema();
    };
    // All three go when the body ended (a listener left on the request would keep the body's
    // chunks for as long as the answer streams).
    const stop = () => {
      raw.removeListener('data', onData);
      raw.removeListener('end', onEnd);
      raw.removeListener('error', onError);
    };
    raw.on('data', onData);
    raw.on('end', onEnd);
    raw.on('error', onError);
  }

  /** schema: a JSON body no deeper than MAX_JSON_DEPTH, then the route's params, body and query schemas. */
  private schema(): void {
    const { request } = this;
    const route = request.route!;
    const body = request.body;
    if (body !== null && typeof body === 'object' && !Buffer.isBuffer(body) && depthExceeds(body, MAX_JSON_DEPTH)) return this.fail(tooDeep());
    if (route.validateParams && !valid(route.validateParams, request.params)) return this.fail(invalid(route.validateParams, 'params'));
    if (route.validateBody && !valid(route.validateBody, body)) return this.fail(invalid(route.validateBody, 'body'));
    if (route.validateQuery && !valid(route.validateQuery, request.query)) return this.fail(invalid(route.validateQuery, 'querystring'));
    this.modelLimits();
  }

  /** model limits: the rpm of a model a JSON body names. */
  private modelLimits(): void {
    const { request } = this;
    if (request.route!.options.auth && namesLimitedModel(this.deps.limits, request.body))
      limitModel(request, request.body.model).then(
        () => this.handle(),
        (err: unknown) => this.fail(err),
      );
    else this.handle();
  }

  /** handler, then the answer: what it returned is sent, unless it answered (or took the response) itself. */
  private handle(): void {
    const { request, reply } = this;
    request.reachedRoute = true;
    let result: unknown;
    try {
      result = request.route!.handler(request, reply);
    } catch (err) {
      return this.fail(err);
    }
    if (result instanceof Promise)
      result.then(
        (value: unknown) => this.answer(value),
        (err: unknown) => this.fail(err),
      );
    else this.answer(result);
  }

  private answer(value: unknown): void {
    const { reply, request } = this;
    if (value === reply || reply.sent || reply.hijacked) {
      if (!reply.sent && !reply.hijacked) this.fail(new Error(`${request.method} ${request.route!.url} ended without an answer`));
      return;
    }
    if (value === undefined) return this.fail(new Error(`${request.method} ${request.route!.url} ended without an answer`));
    reply.send(value);
  }

  /** Any step's refusal or failure: answered in the path's family shape (nobody is answered once the client left). */
  private fail(err: unknown): void {
    const { request, reply } = this;
    const res = reply.raw;
    if (clientGone(request)) return this.departed();
    if (reply.sent || res.headersSent) {
      res.destroy();
      return;
    }
    reply.hijacked = false;
    const answer = errorAnswer(err, request.url, request.log);
    for (const k in answer.headers) reply.header(k, answer.headers[k]);
    reply.code(answer.status).header('content-type', 'application/json; charset=utf-8').send(JSON.stringify(answer.body));
  }

  /** metrics and ledger, when the response closed: sent whole, or the client left first. */
  private closed(): void {
    const { request } = this;
    const res = this.reply.raw;
    const route = request.route;
    if (res.writableFinished) {
      const ms = performance.now() - request.started;
      this.deps.metrics.observe(route?.url ?? 'unmatched', request.method, res.statusCode, ms / 1000);
      if (res.statusCode >= 400) recordBackstop(this.deps.ledger, request, route?.options.billable, res.statusCode, ms);
    } else if (request.raw.aborted && request.method === 'POST') this.departed();
    requestEnd(request, res);
  }

  /** The client left before its request reached a route that records: one 499 row. */
  private departed(): void {
    recordBackstop(this.deps.ledger, this.request, this.request.route?.options.billable, 499, 0);
  }
}

function valid(validate: Validate, data: unknown): boolean {
  return validate(data);
}

function invalid(validate: Validate, context: string): { validation: NonNullable<Validate['errors']>; validationContext: string } {
  return { validation: validate.errors ?? [], validationContext: context };
}

/** Google's clients may send the key as `?key=` on the Gemini routes (and only there). */
function queryKey(request: GatewayRequest): string | undefined {
  if (!request.url.startsWith('/v1beta/')) return undefined;
  const key = (request.query as { key?: unknown }).key;
  return typeof key === 'string' && key ? key : undefined;
}

/** The body parser a Content-Type selects. */
function mediaKind(type: string): 'json' | 'text' | 'multipart' | 'other' {
  const semi = type.indexOf(';');
  const media = (semi < 0 ? type : type.slice(0, semi)).trim().toLowerCase();
  if (media === 'application/json') return 'json';
  if (media === 'text/plain') return 'text';
  if (media === 'multipart/form-data') return 'multipart';
  return 'other';
}

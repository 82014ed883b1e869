import sjson from 'secure-json-parse';
import { errors, GatewayError } from '../http/errors.js';
import { errorAnswer, invalidJson } from '../http/error-answer.js';
import { clientGone, watchDeparture, whenClosed } from '../http/departure.js';
import { JSON_PARSE_OPTIONS } from '../http/json-field.js';
import { MAX_JSON_DEPTH, depthExceeds, tooDeep, tooLarge } from '../http/request-guards.js';
import type { Metrics } from '../http/metrics.js';
import { presentedKey, type Authenticator } from '../auth/authenticator.js';
import { admitKeyLimits, limitModelIn, namesLimitedModel, type LimitContext } from '../limits/hook.js';
import { recordBackstop, watchUnrouted } from '../limits/usage-backstop.js';
import type { UsageLedger } from '../limits/ledger.js';
import type { GatewayRequest, Reply } from './request.js';
import type { Validate } from './request.js';
import { requestEnd, requestStart } from './diagnostics.js';
import { endServerSpan, startServerSpan } from '../telemetry/trace.js';
import { runWithFacts } from '../http/request-facts.js';
import type { RequestLogWriter } from '../request-logs/writer.js';
import { fingerprintForm, fingerprintOf, fingerprintStart, idempotencyKeyOf, type Idempotency } from './idempotency.js';

// THE request pipeline: every request the gateway serves, whatever its route, family or body,
// passes these steps in this order, in this one file (Exchange below):
//
//   guards → departure watch → key → key limits → route steps → body → schema → idempotency key →
//   model limits → handler → answer → (when the response closes) metrics, usage backstop, diagnostics
//
// A step that refuses throws; fail() answers it through errorAnswer() in the path's family shape.

export interface PipelineDeps {
  authenticator: Authenticator;
  limits: LimitContext;
  ledger: Pick<UsageLedger, 'record'>;
  metrics: Metrics;
  /** server.body_limit_mb in bytes. */
  bodyLimit: number;
  /** The request logs (request_logs.enabled), when the app has them. */
  requestLogs?: RequestLogWriter | null;
  /** Idempotency-Key claims and replays (routes marked `idempotent`); null: the header is ignored. */
  idempotency: Idempotency | null;
}

const DIGITS = /^\d+$/;
const CHUNKED_LAST = /(?:^|,)[ \t]*chunked[ \t]*$/i;
const EMPTY = Buffer.alloc(0);

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
   * Every step, in order. `unrouted` answers a request no route takes (after the guards);
   * `closing`: the app is shutting down, so the request is answered 503 `shutting_down`,
   * `Retry-After: 1`, and its connection closed after the answer. Never rejects: a step's refusal or
   * failure is answered by fail().
   */
  run(unrouted: (() => GatewayError) | null, closing: boolean): Promise<void> {
    const facts = (this.request.logFacts = this.deps.requestLogs?.factsFor(this.request) ?? null);
    // The request's server span (when tracing is on) travels on the request; a logged request's
    // steps run with its facts (what the ledger writes for it lands there).
    startServerSpan(this.request);
    return facts ? runWithFacts(facts, () => this.steps(unrouted, closing)) : this.steps(unrouted, closing);
  }

  private async steps(unrouted: (() => GatewayError) | null, closing: boolean): Promise<void> {
    const { request, reply } = this;
    requestStart(request);
    if (closing) {
      reply.header('connection', 'close');
      unrouted = errors.shuttingDown;
    }
    try {
      const refused = closing ? null : this.guards();
      // departure watch: what runs when the response closes hangs on its one listener.
      watchDeparture(request, reply.raw);
      whenClosed(request, () => this.closed());
      if (refused) throw refused;
      if (unrouted) throw unrouted();
      watchUnrouted(request, reply.raw, () => this.departed());
      const route = request.route!;
      if (route.options.auth) {
        await this.key();
        await admitKeyLimits(this.deps.limits, request, ledgerEndpointOf(request), reply);
      }
      const idemKey = route.options.idempotent && this.deps.idempotency ? idempotencyKeyOf(request.raw) : null;
      for (const step of route.steps) {
        await step(request, reply);
        if (reply.sent) return;
      }
      const fingerprint = await this.body(idemKey !== null);
      this.schema();
      // idempotency key: a repeat of an earlier request is answered with its kept answer here.
      if (idemKey !== null && (await this.deps.idempotency!.admit(request, reply, idemKey, fingerprint!))) return;
      if (route.options.auth && namesLimitedModel(this.deps.limits, request.body)) await limitModel(request, request.body.model);
      request.reachedRoute = true;
      this.answer(await route.handler(request, reply));
    } catch (err) {
      this.fail(err);
    }
  }

  /** guards: a declared body over the limit, or one framed by a coding the server cannot read, refused before a byte is read. */
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

  /** key: the application key of an `auth` route. */
  private async key(): Promise<void> {
    const { request } = this;
    const presented = presentedKey(request.headers) ?? queryKey(request);
    const principal = await this.deps.authenticator.authenticate(presented);
    // A revoked or expired key is told so; any other refusal is the plain 401.
    if (!principal) throw this.deps.authenticator.refusal(presented);
    request.principal = principal;
  }

  /**
   * body: JSON (or text) read whole within the limit; a multipart form is left for the route to
   * read, unless `fingerprinted` (the request has an Idempotency-Key): then the form is read whole
   * too and the request's fingerprint returned (null otherwise).
   */
  private async body(fingerprinted: boolean): Promise<string | null> {
    const { request } = this;
    const method = request.method;
    if (method === 'GET' || method === 'HEAD') return null;
    const h = request.headers;
    const type = h['content-type'];
    if (type === undefined) {
      // Nothing to parse: no body at all.
      if (h['transfer-encoding'] === undefined && (h['content-length'] === undefined || h['content-length'] === '0')) {
        return fingerprinted ? fingerprintOf(request, EMPTY) : null;
      }
      throw notJson();
    }
    const kind = mediaKind(type);
    if (kind === 'multipart' && request.route!.multipart) {
      if (!fingerprinted) return null;
      request.bufferedBody = await this.readBody();
      return fingerprintForm(fingerprintStart(request), h, request.bufferedBody);
    }
    if (kind !== 'json' && kind !== 'text') throw notJson();
    const bytes = await this.readBody();
    const text = bytes.toString('utf8');
    const fingerprint = fingerprinted ? fingerprintOf(request, bytes) : null;
    if (kind === 'text') {
      request.body = text;
      return fingerprint;
    }
    if (text === '') throw new GatewayError(400, 'invalid_request', 'The request body is empty; a JSON object is required.');
    try {
      request.body = sjson.parse(text, JSON_PARSE_OPTIONS);
    } catch {
      this.reply.header('connection', 'close');
      throw invalidJson();
    }
    return fingerprint;
  }

  private readBody(): Promise<Buffer> {
    return readBytes(this.request, this.bodyLimit()).catch((err: unknown) => {
      // The rest of the body is not read: the connection ends with the answer.
      this.reply.header('connection', 'close');
      throw err;
    });
  }

  /** schema: a JSON body no deeper than MAX_JSON_DEPTH, then the route's params, body and query schemas. */
  private schema(): void {
    const { request } = this;
    const route = request.route!;
    const body = request.body;
    if (body !== null && typeof body === 'object' && !Buffer.isBuffer(body) && depthExceeds(body, MAX_JSON_DEPTH)) throw tooDeep();
    check(route.validateParams, request.params, 'params');
    check(route.validateBody, body, 'body');
    if (route.validateQuery) check(route.validateQuery, request.query, 'querystring');
  }

  /** answer: what the handler returned is sent, unless it answered (or took the response) itself. */
  private answer(value: unknown): void {
    const { reply, request } = this;
    if (reply.sent || reply.hijacked) return;
    if (value === undefined || value === reply) throw new Error(`${request.method} ${request.route!.url} ended without an answer`);
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
    request.usageError = answer.message;
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
      if (res.statusCode >= 400) this.withFacts(() => recordBackstop(this.deps.ledger, request, route?.options.billable, res.statusCode, ms));
    } else if (request.raw.aborted && request.method === 'POST') this.departed();
    requestEnd(request, res);
    if (request.logFacts) this.deps.requestLogs!.closed(request, request.logFacts, { status: res.headersSent ? res.statusCode : 499, latencyMs: performance.now() - request.started });
    endServerSpan(request, res.headersSent ? res.statusCode : 0, res.writableFinished);
  }

  /** The client left before its request reached a route that records: one 499 row. */
  private departed(): void {
    this.withFacts(() => recordBackstop(this.deps.ledger, this.request, this.request.route?.options.billable, 499, 0));
  }

  /** Runs `fn` with the request's log facts (a listener of the response runs outside them). */
  private withFacts(fn: () => void): void {
    const facts = this.request.logFacts;
    if (facts) runWithFacts(facts, fn);
    else fn();
  }
}

/** Throws the schema's first complaint about `data` (`context`: where it came from). */
function check(validate: Validate | null, data: unknown, context: string): void {
  if (validate && !validate(data)) throw { validation: validate.errors ?? [], validationContext: context };
}

const notJson = () => new GatewayError(400, 'invalid_request', 'The request body must be JSON (Content-Type: application/json).');

/** The request's body, read to its end: 413 past `limit`, 400 when it breaks off or does not match its Content-Length. */
function readBytes(request: GatewayRequest, limit: number): Promise<Buffer> {
  const raw = request.raw;
  const declared = raw.headers['content-length'];
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    // All three go when the body ended (a listener left on the request would keep the body's
    // chunks for as long as the answer streams).
    const stop = () => {
      raw.removeListener('data', onData);
      raw.removeListener('end', onEnd);
      raw.removeListener('error', onError);
    };
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received > limit) {
        stop();
        return reject(tooLarge());
      }
      chunks.push(chunk);
    };
    const onError = () => {
      stop();
      reject(new GatewayError(400, 'invalid_request', 'The request body could not be read.'));
    };
    const onEnd = () => {
      stop();
      if (declared !== undefined && Number(declared) !== received) return reject(new GatewayError(400, 'invalid_request', 'The Content-Length header does not match the body.'));
      resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, received));
    };
    raw.on('data', onData);
    raw.on('end', onEnd);
    raw.on('error', onError);
  });
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

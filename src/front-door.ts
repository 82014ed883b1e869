import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import sjson from 'secure-json-parse';
import type { Principal } from './auth/principal.js';
import { presentedKey, type Authenticator } from './auth/authenticator.js';
import { errorAnswer, invalidJson } from './http/error-answer.js';
import type { ExchangeReply, FrontExchangeRequest, FrontRoute } from './routes/exchange.js';
import { clientGone, lightDepartedSignal, watchDeparture, whenClosed, type DepartureSignal } from './http/departure.js';
import { bodyLeftUnread } from './http/connection-guards.js';
import { JSON_PARSE_OPTIONS } from './http/json-field.js';
import { MAX_JSON_DEPTH, depthExceeds, tooDeep } from './http/request-guards.js';
import type { Metrics } from './http/metrics.js';
import type { SchemaError } from './http/validation-message.js';
import { admitKeyLimits, limitModelIn, namesLimitedModel, type LimitContext, type LimitSubject } from './limits/hook.js';
import { recordBackstop, watchUnrouted, type BackstopSubject } from './limits/usage-backstop.js';
import type { UsageLedger } from './limits/ledger.js';

// The front door: the hottest routes (GET /v1/models, POST /v1/chat/completions, GET
// /v1/video/generations/{id}) served straight from node:http, without Fastify's request cycle
// (request and reply objects, child logger, router, hook runners, content-type parser, onSend
// pipeline), which cost about as much CPU per request as the whole of a raw pass-through proxy.
// Only the plain, common form of such a request comes in here — exact path, a key in a header, for
// a body: Content-Length and JSON content type; everything else goes to Fastify as before (and while
// the app closes, src/http/closing.ts answers every request before either). The steps and their
// order are Fastify's, through the same functions its hooks use: departure watch, key, key limits,
// body (size, JSON, depth, schema with Fastify's own compiled validator), model limit, handler;
// errors answered by the same errorAnswer(); metrics and the usage backstop when the response ends.

type Validate = ((data: unknown) => boolean) & { errors?: SchemaError[] | null };

/** What the front door uses of Fastify's Ajv. */
export interface FrontAjv {
  compile(schema: object): Validate;
}

export interface FrontDeps {
  authenticator: Authenticator;
  limits: LimitContext;
  ledger: Pick<UsageLedger, 'record'>;
  metrics: Metrics;
  bodyLimit: number;
  /** The Ajv instance Fastify compiled its route schemas with (null until Fastify made it). */
  ajv: () => FrontAjv | null;
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

// A JSON content type as Fastify's parser takes it without doubt; any other spelling goes to Fastify.
const PLAIN_JSON = /^application\/json\s*(?:;\s*charset=utf-8\s*)?$/i;
const DIGITS = /^\d+$/;
const PLAIN_PARAM = /^[A-Za-z0-9_.-]{1,256}$/;
const NO_PARAMS: Record<string, string> = Object.freeze({}) as Record<string, string>;

declare module 'fastify' {
  interface FastifyInstance {
    /** How many requests the front door served (the rest went through Fastify). */
    frontDoor: { served(): number };
  }
}

/** Puts the front door before Fastify's handler on the app's server. */
export function installFrontDoor(app: FastifyInstance, deps: FrontDeps, routes: FrontRoute[]): void {
  const server = app.server;
  const fastify = server.listeners('request')[0] as Handler | undefined;
  let count = 0;
  app.decorate('frontDoor', { served: () => count });
  if (!fastify || !routes.length) return;
  const byUrl = new Map(routes.filter((r) => !r.url.includes(':')).map((r) => [r.url, r]));
  // Routes with a parameter as their last segment: the path up to it, and the parameter's name.
  const byPrefix = routes.filter((r) => r.url.includes(':')).map((r) => ({ route: r, prefix: r.url.slice(0, r.url.indexOf(':')), name: r.url.slice(r.url.indexOf(':') + 1) }));
  const validators = new Map<FrontRoute, Validate>();

  const validatorOf = (route: FrontRoute): Validate | null => {
    if (!route.bodySchema) return null;
    let v = validators.get(route);
    if (!v) {
      const ajv = deps.ajv();
      if (!ajv) return null;
      // Ajv keeps compiled schemas by identity: this is the function Fastify's route uses.
      v = ajv.compile(route.bodySchema);
      validators.set(route, v);
    }
    return v;
  };

  /** Whether the request is in its route's plain form (a POST's validator at hand). */
  const takes = (route: FrontRoute, req: IncomingMessage, key: string | undefined, validate: Validate | null): boolean => {
    const h = req.headers;
    if (req.method !== route.method || h['transfer-encoding'] !== undefined || key === undefined) return false;
    const length = h['content-length'];
    if (route.method === 'GET') return length === undefined;
    if (length === undefined || !DIGITS.test(length) || Number(length) === 0 || Number(length) > deps.bodyLimit) return false;
    return PLAIN_JSON.test(h['content-type'] ?? '') && validate !== null;
  };

  // Every static path Fastify routes (known once the app is ready, before the first request).
  let statics: Set<string> | null = null;
  const staticUrls = () => (statics ??= new Set(app.routeTable.routes().map((r) => r.url).filter((u) => !u.includes(':') && !u.includes('*'))));

  server.removeListener('request', fastify);
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const url = req.url ?? '';
    let route = byUrl.get(url);
    let params: Record<string, string> | null = null;
    if (!route) {
      for (const p of byPrefix) {
        // A plain value only (nothing to decode, no further segment or query, within Fastify's
        // maxParamLength), and not a path a static route of Fastify's takes first.
        if (url.startsWith(p.prefix) && PLAIN_PARAM.test(url.slice(p.prefix.length)) && !staticUrls().has(url)) {
          route = p.route;
          params = { [p.name]: url.slice(p.prefix.length) };
          break;
        }
      }
    }
    if (!route) return fastify(req, res);
    const key = presentedKey(req.headers);
    const validate = validatorOf(route);
    if (!takes(route, req, key, validate)) return fastify(req, res);
    count++;
    serve(deps, app.log, route, validate, key!, req, res, params);
  });
}

let logged = 0;

/** The front door's request: what handlers, limits and the backstop read of it. */
export class FrontRequest implements FrontExchangeRequest, LimitSubject, BackstopSubject {
  body: unknown = undefined;
  principal: Principal | null = null;
  rateLimitedModel: string | null = null;
  usageRecorded = false;
  usageModel = '';
  reachedRoute = false;
  params: Record<string, string> = NO_PARAMS;
  private childLog: FastifyBaseLogger | null = null;

  constructor(
    readonly raw: IncomingMessage,
    readonly method: string,
    readonly url: string,
    private readonly baseLog: FastifyBaseLogger,
  ) {}

  get headers() {
    return this.raw.headers;
  }

  /** As Fastify without trustProxy: the connection's protocol and the Host header. */
  get protocol(): 'http' | 'https' {
    return (this.raw.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http';
  }

  get host(): string {
    return this.raw.headers.host ?? '';
  }

  get departed(): DepartureSignal {
    return lightDepartedSignal(this);
  }

  /** A child logger with a request id, made only when something is logged. */
  get log(): FastifyBaseLogger {
    return (this.childLog ??= this.baseLog.child({ reqId: `front-${++logged}` }));
  }
}

/**
 * Answers sent during one turn of the event loop, written together in its check phase. Written as
 * each was sent, every answer made the loop go back to epoll for the next few requests; written
 * in one batch, the clients' next requests come in together too and each turn of the loop serves
 * more of them (about an eighth less CPU per non-streamed chat request under load). An answer goes
 * out microseconds later, in the order it was sent; `sent` is set at once.
 */
let unwritten: FrontReply[] = [];

function writeUnwritten(): void {
  const batch = unwritten;
  unwritten = [];
  for (const reply of batch) reply.write();
}

export class FrontReply implements ExchangeReply {
  statusCode = 200;
  sent = false;
  hijacked = false;
  /** Names (lower case) and values, in turn: written with writeHead's flat-array form, no object built per request. */
  private readonly fields: string[] = [];
  /** The body send() was given, until write() writes it. */
  private payload: string | Buffer = '';

  constructor(
    readonly raw: ServerResponse,
    private readonly request: FrontRequest,
  ) {}

  header(name: string, value: string): this {
    const key = name.toLowerCase();
    const f = this.fields;
    for (let i = 0; i < f.length; i += 2) {
      if (f[i] === key) {
        f[i + 1] = value;
        return this;
      }
    }
    f.push(key, value);
    return this;
  }

  private has(key: string): boolean {
    const f = this.fields;
    for (let i = 0; i < f.length; i += 2) if (f[i] === key) return true;
    return false;
  }

  code(status: number): this {
    this.statusCode = status;
    return this;
  }

  getHeaders(): Record<string, string> {
    const headers: Record<string, string> = {};
    const f = this.fields;
    for (let i = 0; i < f.length; i += 2) headers[f[i]] = f[i + 1];
    return headers;
  }

  hijack(): this {
    this.hijacked = true;
    return this;
  }

  send(payload: string | Buffer = ''): this {
    if (this.sent || this.hijacked) return this;
    this.sent = true;
    // Answered before the body was read (a refused key, say): the connection ends with the answer.
    if (bodyLeftUnread(this.request.raw)) this.header('connection', 'close');
    if (!this.has('content-type')) this.fields.push('content-type', typeof payload === 'string' ? 'text/plain; charset=utf-8' : 'application/octet-stream');
    this.header('content-length', String(typeof payload === 'string' ? Buffer.byteLength(payload) : payload.length));
    this.payload = payload;
    if (unwritten.push(this) === 1) setImmediate(writeUnwritten);
    return this;
  }

  /** Writes what send() was given (from writeUnwritten). */
  write(): void {
    const payload = this.payload;
    this.payload = '';
    try {
      this.raw.writeHead(this.statusCode, this.fields);
      this.raw.end(payload);
    } catch {
      // A header Node refuses (a send() that wrote at once threw it to its caller, after `sent`,
      // whose failure then ended the connection): the answer cannot go out, the connection ends.
      this.raw.destroy();
    }
  }
}

/**
 * One request through the front door: its steps are this object's methods, so a request costs this
 * object, its request and its reply, and a closure only where a callback is handed to code that
 * takes a function (the close watch, the limits' verdict, a promise, the body's stream events).
 */
class FrontCall {
  private readonly started = performance.now();

  constructor(
    private readonly deps: FrontDeps,
    private readonly route: FrontRoute,
    private readonly validate: Validate | null,
    private readonly request: FrontRequest,
    private readonly reply: FrontReply,
  ) {}

  start(key: string): void {
    const { request } = this;
    const res = this.reply.raw;
    watchDeparture(request, res);
    // Everything that runs when the response closes goes on the departure watch's one 'close'
    // listener: Fastify's onResponse work once it was sent whole, its onRequestAbort work (the client
    // left before its request was complete) otherwise.
    whenClosed(request, () => this.closed());
    if (this.route.method === 'POST') watchUnrouted(request, res, () => this.departed());
    let found;
    try {
      found = this.deps.authenticator.resolve(key);
    } catch (err) {
      return this.fail(err);
    }
    if (found instanceof Promise)
      found.then(
        (principal) => this.admit(principal, key),
        (err: unknown) => this.fail(err),
      );
    else this.admit(found, key);
  }

  private closed(): void {
    const { route } = this;
    const res = this.reply.raw;
    if (res.writableFinished) {
      const ms = performance.now() - this.started;
      this.deps.metrics.observe(route.url, route.method, res.statusCode, ms / 1000);
      if (res.statusCode >= 400) recordBackstop(this.deps.ledger, this.request, route.billable, res.statusCode, ms);
    } else if (this.request.raw.aborted && route.method === 'POST') this.departed();
  }

  /** The client left before its request reached a route that records: one 499 row. */
  private departed(): void {
    recordBackstop(this.deps.ledger, this.request, this.route.billable, 499, 0);
  }

  private admit(principal: Principal | null, key: string | undefined): void {
    if (!principal) return this.fail(this.deps.authenticator.refusal(key));
    this.request.principal = principal;
    admitKeyLimits(this.deps.limits, this.request, this.route.billable ?? this.route.url, this.reply, (err) => (err ? this.fail(err) : this.body()));
  }

  private body(): void {
    const { reply, validate } = this;
    if (!validate) return this.handle();
    const req = this.request.raw;
    const chunks: Buffer[] = [];
    let received = 0;
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      chunks.push(chunk);
    };
    const onError = (err: Error & { statusCode?: number }) => {
      req.removeListener('data', onData);
      req.removeListener('end', onEnd);
      if (!(typeof err.statusCode === 'number' && err.statusCode >= 400)) err.statusCode = 400;
      reply.header('connection', 'close');
      this.fail(err);
    };
    const onEnd = () => {
      // All three go (a listener left on the request would keep the body's chunks for as long as
      // the answer streams).
      req.removeListener('data', onData);
      req.removeListener('end', onEnd);
      req.removeListener('error', onError);
      let parsed: unknown;
      try {
        parsed = sjson.parse(chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks, received).toString('utf8'), JSON_PARSE_OPTIONS);
      } catch {
        reply.header('connection', 'close');
        return this.fail(invalidJson());
      }
      this.request.body = parsed;
      if (parsed !== null && typeof parsed === 'object' && depthExceeds(parsed, MAX_JSON_DEPTH)) return this.fail(tooDeep());
      if (!validate(parsed)) return this.fail({ validation: validate.errors ?? [], validationContext: 'body' });
      if (namesLimitedModel(this.deps.limits, parsed))
        limitModelIn(this.deps.limits, this.request, this.route.billable ?? this.route.url, parsed.model).then(
          () => this.handle(),
          (err: unknown) => this.fail(err),
        );
      else this.handle();
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  }

  private handle(): void {
    const { request, reply, route } = this;
    request.reachedRoute = true;
    let result: unknown;
    try {
      result = route.handle(request, reply);
    } catch (err) {
      return this.fail(err);
    }
    if (result instanceof Promise)
      result.then(
        () => this.answered(),
        (err: unknown) => this.fail(err),
      );
    else this.answered();
  }

  /** A handler that ended without answering (none should) gets a 500, never a hung request. */
  private answered(): void {
    const { reply, route } = this;
    if (!reply.sent && !reply.hijacked) this.fail(new Error(`${route.method} ${route.url} ended without an answer`));
  }

  private fail(err: unknown): void {
    const { request, reply, route } = this;
    const res = reply.raw;
    // The client left: nobody to answer (one 499 row).
    if (clientGone(request)) return this.departed();
    if (reply.sent || res.headersSent) {
      res.destroy();
      return;
    }
    if (reply.hijacked) reply.hijacked = false;
    const answer = errorAnswer(err, route.url, request.log);
    for (const k in answer.headers) reply.header(k, answer.headers[k]);
    reply.code(answer.status).header('content-type', 'application/json; charset=utf-8').send(JSON.stringify(answer.body));
  }
}

function serve(deps: FrontDeps, log: FastifyBaseLogger, route: FrontRoute, validate: Validate | null, key: string, req: IncomingMessage, res: ServerResponse, params: Record<string, string> | null): void {
  const request = new FrontRequest(req, route.method, route.url, log);
  if (params) request.params = params;
  new FrontCall(deps, route, validate, request, new FrontReply(res, request)).start(key);
}

import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { RequestFacts } from '../http/request-facts.js';
import type { TraceParent } from '../telemetry/trace.js';
import { parse as parseQuery } from 'node:querystring';
import type { Readable } from 'node:stream';
import type { Logger } from 'pino';
import type { Principal } from '../auth/principal.js';
import type { RequestClient } from '../http/forwarded.js';
import { departedSignal, lightDepartedSignal, type DepartureSignal } from '../http/departure.js';
import { bodyLeftUnread } from '../http/connection-guards.js';
import type { AdminActor } from '../admin/tokens.js';
import type { LimitContext } from '../limits/hook.js';
import { formParts, type FormPart, type MultipartLimits } from './multipart.js';
import type { SchemaError } from '../http/validation-message.js';

/** What a route declares of its request's types (all optional; defaults below). */
export interface RouteTypes {
  Params?: unknown;
  Querystring?: unknown;
  Body?: unknown;
}

type Or<T, D> = unknown extends T ? D : T;

/** A request as a route's handler sees it: its params, query and body of the types the route declared. */
export type TypedRequest<G extends RouteTypes> = GatewayRequest & {
  params: Or<G['Params'], Record<string, string>>;
  readonly query: Or<G['Querystring'], Record<string, unknown>>;
  body: Or<G['Body'], unknown>;
};

// A route as registered: method, path, schemas and what the pipeline's steps read of it.

export type Handler<G extends RouteTypes = RouteTypes> = (request: TypedRequest<G>, reply: Reply) => unknown;
/** A route's own step, run after the key and its limits, before the body is read. */
export type RouteStep = (request: GatewayRequest, reply: Reply) => Promise<void>;

export interface RouteSchema {
  body?: object;
  params?: object;
  querystring?: object;
  /** By status (`200`, …): documents the answer and serializes it (fields not in it are left out). */
  response?: Record<number, object>;
  /** OpenAPI only. */
  tags?: string[];
  summary?: string;
  /** Left out of /openapi.json. */
  hide?: boolean;
}

export interface RouteOptions {
  schema?: RouteSchema;
  /** The route needs a valid application key. */
  auth?: boolean;
  /**
   * The route is billable: its ledger endpoint name (as its metered call writes it). Every
   * authenticated request to it gets one ledger row, the ones refused before the hold included.
   */
  billable?: string;
  /** Admin routes reachable without an admin token (the console's login and files). */
  adminPublic?: boolean;
  /** The route reads a multipart/form-data body itself (request.parts()), with these limits. */
  multipart?: MultipartLimits;
  /**
   * The route honours an Idempotency-Key header (the routes that cost money): a repeat of the same
   * request with the same key is answered with the first answer (pipeline/idempotency.ts).
   */
  idempotent?: boolean;
  /** A body limit below the server's. */
  bodyLimit?: number;
  /** Route steps, run in order after the key's limits (before the body is read). */
  onRequest?: RouteStep | RouteStep[];
  /** find-my-way constraints (a strategy registered with Gateway.addConstraintStrategy). */
  constraints?: Record<string, string>;
}

export type Validate = ((data: unknown) => boolean) & { errors?: SchemaError[] | null };
export type Serialize = (value: unknown) => string;

export interface Route {
  readonly method: string;
  /** The pattern (`/v1/video/generations/:task_id`): the metrics label and the ledger endpoint of an unbilled route. */
  readonly url: string;
  readonly options: RouteOptions;
  readonly handler: Handler;
  readonly steps: RouteStep[];
  readonly multipart: MultipartLimits | null;
  validateParams: Validate | null;
  validateQuery: Validate | null;
  validateBody: Validate | null;
  readonly serializers: Map<number, Serialize>;
}

const NO_PARAMS: Record<string, string> = Object.freeze({}) as Record<string, string>;
let requestCount = 0;

/**
 * One request as every step and handler sees it. Made once per request; what most requests never
 * read (the query, the child logger, the departure signal) is made on first ask.
 */
export class GatewayRequest {
  body: unknown = undefined;
  params: Record<string, string> = NO_PARAMS;
  principal: Principal | null = null;
  /** The model whose rpm this request already counted against (counted once per request). */
  rateLimitedModel: string | null = null;
  /** A usage row for this request was written (or its route has taken charge of writing it). */
  usageRecorded = false;
  /** The model a body that is not JSON named (a multipart `model` field, a Gemini path), for the refusal row. */
  usageModel = '';
  /** The message of the error this request was answered with, for its refusal row. */
  usageError = '';
  /** The request got as far as its route's handler. */
  reachedRoute = false;
  /** Admin routes: who is calling (an admin token or a console session). */
  adminActor: AdminActor | null = null;
  /** Admin routes: the client, behind a trusted proxy too (server.trusted_proxies). */
  adminClient: RequestClient = { address: '', https: false };
  /** The rate limits, for a route that counts a model itself (limitModel in steps.ts). */
  limits: LimitContext | null = null;
  /** A logged request (request_logs): what its log row needs, gathered as it runs. */
  logFacts: RequestFacts | null = null;
  /** The request's server span when tracing is on (non-recording when not sampled): the parent of its spans. */
  trace: TraceParent | null = null;
  /** The body as read whole for its Idempotency-Key fingerprint (a multipart form); null when it streams. */
  bufferedBody: Buffer | null = null;
  /** performance.now() when the request reached the pipeline. */
  readonly started: number;
  private parsedQuery: Record<string, unknown> | null = null;
  private childLog: Logger | null = null;

  constructor(
    readonly raw: IncomingMessage,
    /** The route that took it (null for an unrouted request: 404, 405, a bad path). */
    readonly route: Route | null,
    /** The path and query as sent. */
    readonly url: string,
    /** The query string after `?`, '' when none. */
    private readonly search: string,
    private readonly baseLog: Logger,
    started: number,
  ) {
    this.started = started;
  }

  get method(): string {
    return this.raw.method ?? 'GET';
  }

  get headers(): IncomingHttpHeaders {
    return this.raw.headers;
  }

  /** The query string's fields (a repeated name as an array). */
  get query(): Record<string, unknown> {
    return (this.parsedQuery ??= this.search ? { ...parseQuery(this.search) } : {});
  }

  /** As seen on this connection: TLS or not (a proxy's X-Forwarded-Proto is read by http/forwarded.ts). */
  get protocol(): 'http' | 'https' {
    return (this.raw.socket as { encrypted?: boolean } | null)?.encrypted ? 'https' : 'http';
  }

  get host(): string {
    return this.raw.headers.host ?? '';
  }

  /**
   * Aborted when the client goes away before its answer was complete (an AbortSignal, for code that
   * hands it to fetch or AbortSignal.any). Watched from the request's first moment.
   */
  get departed(): AbortSignal {
    return departedSignal(this);
  }

  /** The same departure as a light signal, for code that takes any DepartureSignal (the chat path). */
  get departure(): DepartureSignal {
    return lightDepartedSignal(this);
  }

  /** A child logger with a request id, made only when something is logged. */
  get log(): Logger {
    return (this.childLog ??= this.baseLog.child({ reqId: `req-${++requestCount}` }));
  }

  /** Whether the body is a multipart form (read it with parts()). */
  isMultipart(): boolean {
    return /^multipart\/form-data/i.test(this.raw.headers['content-type'] ?? '');
  }

  /** The parts of a multipart form, one at a time (a file's stream must be read before the next part). */
  parts(): AsyncIterable<FormPart> {
    return formParts(this.raw, this.route?.multipart ?? {}, this.bufferedBody);
  }
}

/**
 * Answers sent during one turn of the event loop, written together in its check phase. Written as
 * each was sent, every answer made the loop go back to epoll for the next few requests; written
 * in one batch, the clients' next requests come in together too and each turn of the loop serves
 * more of them. An answer goes out microseconds later, in the order it was sent; `sent` is set at once.
 */
let unwritten: Reply[] = [];

function writeUnwritten(): void {
  const batch = unwritten;
  unwritten = [];
  for (const reply of batch) reply.write();
}

const isStream = (v: unknown): v is Readable => v !== null && typeof v === 'object' && typeof (v as Readable).pipe === 'function';

/** The answer of one request: status, headers, and its body sent once. */
export class Reply {
  statusCode = 200;
  sent = false;
  /** The handler writes the response itself (a stream) through `raw`. */
  hijacked = false;
  /**
   * What was sent is not the whole answer (a stream its upstream broke off, ended by an error
   * event): it is not kept for an Idempotency-Key's replay.
   */
  incomplete = false;
  /** Names (lower case) and values, in turn: written with writeHead's flat-array form, no object built per request. */
  private readonly fields: string[] = [];
  private payload: string | Buffer = '';
  /** Told the answer once it is written whole (a request with an Idempotency-Key): see record(). */
  private recorder: ((answer: WrittenAnswer) => void) | null = null;
  /** The response's own methods record it (a stream piped or written by a hijacking handler). */
  private recordedByResponse = false;

  constructor(
    readonly raw: ServerResponse,
    private readonly request: GatewayRequest,
  ) {}

  header(name: string, value: string | number): this {
    const key = name.toLowerCase();
    const v = String(value);
    const f = this.fields;
    for (let i = 0; i < f.length; i += 2) {
      if (f[i] === key) {
        f[i + 1] = v;
        return this;
      }
    }
    f.push(key, v);
    return this;
  }

  headers(values: Record<string, string | number>): this {
    for (const k in values) this.header(k, values[k]);
    return this;
  }

  getHeader(name: string): string | undefined {
    const key = name.toLowerCase();
    const f = this.fields;
    for (let i = 0; i < f.length; i += 2) if (f[i] === key) return f[i + 1];
    return undefined;
  }

  getHeaders(): Record<string, string> {
    const headers: Record<string, string> = {};
    const f = this.fields;
    for (let i = 0; i < f.length; i += 2) headers[f[i]] = f[i + 1];
    return headers;
  }

  code(status: number): this {
    this.statusCode = status;
    return this;
  }

  hijack(): this {
    if (this.recorder) this.recordResponse();
    this.hijacked = true;
    return this;
  }

  /**
   * Calls `ended` once with the answer as written to the client: send()'s status, headers and body
   * as they go out, or, for a stream (piped, or written by a handler that hijacked the response),
   * everything written to the response until it ended. A response destroyed without an end never
   * calls it.
   */
  record(ended: (answer: WrittenAnswer) => void): void {
    this.recorder = ended;
    if (this.hijacked) this.recordResponse();
  }

  private recordResponse(): void {
    if (this.recordedByResponse) return;
    this.recordedByResponse = true;
    recordAnswer(this.raw, this.recorder!);
  }

  /**
   * Sends the answer: a string or Buffer as it is, a readable stream piped, anything else as JSON
   * (by the route's response serializer for this status when it has one). Once only.
   */
  send(payload?: unknown): this {
    if (this.sent || this.hijacked) return this;
    this.sent = true;
    // Answered before the body was read (a refused key, say): the connection ends with the answer.
    if (bodyLeftUnread(this.request.raw)) this.header('connection', 'close');
    if (isStream(payload)) return this.pipe(payload);
    let body: string | Buffer;
    if (typeof payload === 'string' || Buffer.isBuffer(payload)) {
      body = payload;
      if (this.getHeader('content-type') === undefined) this.fields.push('content-type', typeof payload === 'string' ? 'text/plain; charset=utf-8' : 'application/octet-stream');
    } else {
      const serialize = this.request.route?.serializers.get(this.statusCode);
      body = payload === undefined ? '' : serialize ? serialize(payload) : JSON.stringify(payload);
      if (this.getHeader('content-type') === undefined) this.fields.push('content-type', 'application/json; charset=utf-8');
    }
    this.header('content-length', typeof body === 'string' ? Buffer.byteLength(body) : body.length);
    this.payload = body;
    if (this.request.logFacts) this.request.logFacts.response = body;
    if (unwritten.push(this) === 1) setImmediate(writeUnwritten);
    return this;
  }

  /** Writes what send() was given (from writeUnwritten). */
  write(): void {
    const payload = this.payload;
    this.payload = '';
    const recorder = this.recordedByResponse ? null : this.recorder;
    const headers = recorder ? headerRecord(this.raw.getHeaders(), this.fields) : null;
    try {
      this.raw.writeHead(this.statusCode, this.fields);
      this.raw.end(payload);
    } catch {
      // A header Node refuses: the answer cannot go out, the connection ends.
      this.raw.destroy();
      return;
    }
    if (recorder) recorder({ status: this.statusCode, headers: headers!, body: typeof payload === 'string' ? Buffer.from(payload) : payload });
  }

  private pipe(stream: Readable): this {
    const res = this.raw;
    if (this.recorder) this.recordResponse();
    try {
      res.writeHead(this.statusCode, this.fields);
    } catch {
      stream.destroy();
      res.destroy();
      return this;
    }
    stream.on('error', () => res.destroy());
    res.on('close', () => stream.destroy());
    stream.pipe(res);
    return this;
  }
}

/** An answer as it was written to the client. */
export interface WrittenAnswer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/**
 * Records everything written to `res` (a piped stream, a hijacked stream's own writes, and a
 * send() after them) and calls `ended` once, when the response is ended. A response destroyed
 * without end() never calls it. Reply.record() installs it for streams only.
 */
function recordAnswer(res: ServerResponse, ended: (answer: WrittenAnswer) => void): void {
  const chunks: Buffer[] = [];
  let status = 0;
  let headers: Record<string, string> | null = null;
  const take = (chunk: unknown, encoding: unknown) => {
    if (typeof chunk === 'string') chunks.push(Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8'));
    else if (chunk instanceof Uint8Array) chunks.push(Buffer.from(chunk));
  };
  const writeHead = res.writeHead;
  const write = res.write;
  const end = res.end;
  res.writeHead = function (this: ServerResponse, ...args: unknown[]) {
    status = args[0] as number;
    headers = headerRecord(res.getHeaders(), typeof args[1] === 'string' ? args[2] : args[1]);
    return (writeHead as (...a: unknown[]) => ServerResponse).apply(this, args);
  } as ServerResponse['writeHead'];
  res.write = function (this: ServerResponse, chunk: unknown, ...rest: unknown[]) {
    take(chunk, rest[0]);
    return (write as (...a: unknown[]) => boolean).apply(this, [chunk, ...rest]);
  } as ServerResponse['write'];
  res.end = function (this: ServerResponse, ...args: unknown[]) {
    if (typeof args[0] !== 'function') take(args[0], args[1]);
    res.writeHead = writeHead;
    res.write = write;
    res.end = end;
    const result = (end as (...a: unknown[]) => ServerResponse).apply(this, args);
    ended({ status: status || res.statusCode, headers: headers ?? headerRecord(res.getHeaders(), undefined), body: Buffer.concat(chunks) });
    return result;
  } as ServerResponse['end'];
}

/** The headers of a response as names (lower case) and values: those set on it, then writeHead's (an object or flat array). */
function headerRecord(set: Record<string, unknown>, given: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  const put = (name: unknown, value: unknown) => {
    if (value !== undefined) out[String(name).toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value);
  };
  for (const k in set) put(k, set[k]);
  if (Array.isArray(given)) for (let i = 0; i + 1 < given.length; i += 2) put(given[i], given[i + 1]);
  else if (given && typeof given === 'object') for (const [k, v] of Object.entries(given)) put(k, v);
  return out;
}

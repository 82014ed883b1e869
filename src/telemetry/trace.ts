import { ROOT_CONTEXT, SpanKind, SpanStatusCode, context, propagation, trace, type Attributes, type Context, type Link, type Span, type SpanContext } from '@opentelemetry/api';
import type { IncomingHttpHeaders } from 'node:http';
import { randomBytes } from 'node:crypto';
import { redact } from '../http/redact.js';

// The gateway's spans, written against the OpenTelemetry API only. Until telemetry starts
// (src/telemetry/index.ts loads the SDK when `telemetry.enabled`), `tracing` stays false and every
// helper below runs its work without touching the API at all: tracing off costs one boolean test.
//
// Attributes never carry a key, an upstream credential or a URL's query (a Gemini `?key=`): only
// ids, names, counts and paths; error messages go through redact() like error answers do.

let tracing = false;
let tracer = trace.getTracer('mediagate');

/** Whether spans are recorded (the SDK is started). */
export function tracingOn(): boolean {
  return tracing;
}

/** Set by the SDK module when it starts and stops. */
export function setTracing(on: boolean): void {
  tracing = on;
  // The tracer of the provider just registered (a restarted SDK registers a new one).
  if (on) tracer = trace.getTracer('mediagate');
}

/** The part of a served request the server span reads (structural: the pipeline's GatewayRequest is one). */
export interface TracedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly protocol: string;
  readonly route: { readonly url: string } | null;
  readonly principal: { readonly keyId: string } | null;
}

const serverSpans = new WeakMap<object, Span>();

/**
 * Runs `fn` (the pipeline's steps) inside the request's SERVER span, continuing the trace of an
 * incoming `traceparent`. The span ends in endServerSpan() when the response closes.
 */
export function runInServerSpan<T>(request: TracedRequest, fn: () => T): T {
  if (!tracing) return fn();
  const parent = propagation.extract(ROOT_CONTEXT, request.headers);
  const path = pathOf(request.url);
  const route = request.route?.url;
  const host = hostAndPort(request.headers.host);
  const attributes: Attributes = {
    'http.request.method': request.method,
    'url.path': path,
    'url.scheme': request.protocol,
  };
  if (route) attributes['http.route'] = route;
  if (host.address) attributes['server.address'] = host.address;
  if (host.port) attributes['server.port'] = host.port;
  const agent = request.headers['user-agent'];
  if (agent) attributes['user_agent.original'] = redact(agent.slice(0, 256));
  const span = tracer.startSpan(route ? `${request.method} ${route}` : request.method, { kind: SpanKind.SERVER, attributes }, parent);
  serverSpans.set(request, span);
  return context.with(trace.setSpan(parent, span), fn);
}

/** The response closed (`status` 0: nothing was sent, the client left first). */
export function endServerSpan(request: TracedRequest, status: number, finished: boolean): void {
  const span = serverSpans.get(request);
  if (!span) return;
  serverSpans.delete(request);
  if (request.principal) span.setAttribute('mediagate.key_id', request.principal.keyId);
  if (status) span.setAttribute('http.response.status_code', status);
  if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
  if (!finished) span.addEvent('client closed the connection');
  span.end();
}

/** The request's server span, for attributes known only inside a handler (tokens, cost). */
export function serverSpanOf(request: object): Span | undefined {
  return serverSpans.get(request);
}

export interface SpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
  links?: Link[];
  /** Start a trace of its own (a video task), rather than a child of the active span. */
  root?: boolean;
  /** The parent, when it is not the active span (a task's stored trace). */
  parent?: Context;
  startTime?: number;
}

/**
 * Runs `fn` inside a span named `name` (when tracing is on): a throw marks the span an error with
 * its redacted message, and the span ends when `fn` settles.
 */
export async function inSpan<T>(name: string, opts: SpanOptions, fn: (span: Span | null) => Promise<T>): Promise<T> {
  if (!tracing) return fn(null);
  const span = startSpan(name, opts);
  try {
    return await context.with(trace.setSpan(opts.parent ?? context.active(), span), () => fn(span));
  } catch (err) {
    failSpan(span, err);
    throw err;
  } finally {
    span.end();
  }
}

/** A span started now (ended by the caller); with `opts.parent`, under that context. */
export function startSpan(name: string, opts: SpanOptions = {}): Span {
  return tracer.startSpan(name, { kind: opts.kind ?? SpanKind.INTERNAL, attributes: opts.attributes, links: opts.links, root: opts.root, startTime: opts.startTime }, opts.parent ?? context.active());
}

/** Runs `fn` with `span` as the active span (so the upstream request carries its traceparent). */
export function withActiveSpan<T>(span: Span | null, fn: () => T): T {
  return span ? context.with(trace.setSpan(context.active(), span), fn) : fn();
}

/** Marks a span failed, with the error's redacted message (never a credential). */
export function failSpan(span: Span, err: unknown): void {
  const message = redact(err instanceof Error ? err.message : String(err)).slice(0, 512);
  const kind = (err as { kind?: unknown } | null)?.kind;
  span.setAttribute('error.type', typeof kind === 'string' ? kind : err instanceof Error ? err.constructor.name : 'error');
  span.setStatus({ code: SpanStatusCode.ERROR, message });
}

/** The active span's context, if one is recording (for a span link). */
export function activeSpanContext(): SpanContext | undefined {
  if (!tracing) return undefined;
  const span = trace.getActiveSpan();
  return span?.isRecording() ? span.spanContext() : undefined;
}

/** A W3C `traceparent` for a span context. */
export function traceparentOf(ctx: SpanContext): string {
  return `00-${ctx.traceId}-${ctx.spanId}-0${(ctx.traceFlags & 1).toString(16)}`;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The context a stored `traceparent` names (ROOT when it is empty or malformed). */
export function contextOfTraceparent(value: string): Context {
  const m = TRACEPARENT.exec(value);
  if (!m) return ROOT_CONTEXT;
  return trace.setSpanContext(ROOT_CONTEXT, { traceId: m[1], spanId: m[2], traceFlags: parseInt(m[3], 16) & 1, isRemote: true });
}

/**
 * The trace id a request is logged under: its server span's when tracing is on, else the
 * incoming traceparent's, else a random one.
 */
export function requestTraceId(request: TracedRequest): string {
  const span = serverSpans.get(request);
  if (span) return span.spanContext().traceId;
  return traceIdOfTraceparent(request.headers.traceparent) || randomBytes(16).toString('hex');
}

/** The trace id of a traceparent header ('' when absent or malformed). */
export function traceIdOfTraceparent(value: string | string[] | undefined): string {
  const m = typeof value === 'string' ? TRACEPARENT.exec(value.trim()) : null;
  return m && m[1] !== '0'.repeat(32) ? m[1] : '';
}

function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
}

function hostAndPort(host: string | undefined): { address: string; port: number } {
  if (!host) return { address: '', port: 0 };
  const m = /^(\[[^\]]*\]|[^:]*)(?::(\d+))?$/.exec(host);
  if (!m) return { address: '', port: 0 };
  return { address: m[1], port: m[2] ? Number(m[2]) : 0 };
}

export { SpanKind, SpanStatusCode, type Span };

/** A stream's first token went to the client: an event on the active span (the attempt's). */
export function markFirstToken(): void {
  if (tracing) trace.getActiveSpan()?.addEvent('gen_ai.first_token');
}

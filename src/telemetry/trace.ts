import { ROOT_CONTEXT, SamplingDecision, SpanKind, SpanStatusCode, TraceFlags, createTraceState, trace, type Attributes, type Context, type Link, type Span, type SpanContext, type Tracer } from '@opentelemetry/api';
import type { IncomingHttpHeaders } from 'node:http';
import { redact } from '../http/redact.js';

// The gateway's spans, written against the OpenTelemetry API only. Until telemetry starts
// (src/telemetry/index.ts loads the SDK when `telemetry.enabled`), `tracer` stays null and every
// helper below runs its work without touching the API at all: tracing off costs one test.
//
// The trace context is carried explicitly, never in async context: sampling is decided once, at
// the request's server span, and that span (recording, or a non-recording one when the request is
// not sampled) travels on the request object (GatewayRequest.trace). Child spans (upstream attempts,
// credit holds, a task's polls) are started from an explicit parent and only when the parent is
// sampled. The server span's sampling decision is asked of the configured sampler here, with a
// trace id drawn here (the unsampled fast path): an unsampled request never enters the SDK, and
// costs one sampler call, two ids and one traceparent per upstream request; a sampled one is
// started by the SDK with that same trace id (`ids`, the SDK's id generator). No context manager
// is registered: AsyncLocalStorage on Node 20 runs promise hooks for every promise of the process
// once enabled.
//
// Attributes never carry a key, an upstream credential or a URL's query (a Gemini `?key=`): only
// ids, names, counts and paths; error messages go through redact() like error answers do.

/** The sampler's part the gateway calls (the SDK's Sampler interface). */
export interface SamplerLike {
  shouldSample(context: Context, traceId: string, spanName: string, spanKind: SpanKind, attributes: Attributes, links: Link[]): { decision: SamplingDecision };
}

let tracer: Tracer | null = null;
let sampler: SamplerLike | null = null;

/** Whether spans are recorded (the SDK is started). */
export function tracingOn(): boolean {
  return tracer !== null;
}

/** Set by the SDK module when it starts (its tracer and sampler) and stops (null). */
export function setTracer(t: Tracer | null, s: SamplerLike | null = null): void {
  tracer = t;
  sampler = t ? s : null;
}

/**
 * The SDK's id generator (its IdGenerator interface): random ids, but a sampled root server span
 * takes the trace id its sampling decision was made with.
 */
export const ids = {
  nextTraceId: '',
  generateTraceId(): string {
    const id = ids.nextTraceId || newTraceId();
    ids.nextTraceId = '';
    return id;
  },
  generateSpanId: newSpanId,
};

const NO_ATTRIBUTES: Attributes = Object.freeze({});
const NO_LINKS: Link[] = [];

/**
 * The span a piece of work hangs under: a request's server span, a task's stored trace. A
 * non-recording span stands for an unsampled trace (it still names the trace for traceparents).
 */
export type TraceParent = Span;

/** The part of a served request the server span reads (structural: the pipeline's GatewayRequest is one). */
export interface TracedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly protocol: string;
  readonly route: { readonly url: string } | null;
  readonly principal: { readonly keyId: string } | null;
  /** The request's server span, set by startServerSpan (null: tracing off). */
  trace: TraceParent | null;
}

/** Whether a parent's trace is sampled (its children are recorded). */
export function sampled(parent: TraceParent | null | undefined): parent is TraceParent {
  return parent !== null && parent !== undefined && (parent.spanContext().traceFlags & TraceFlags.SAMPLED) !== 0;
}

/**
 * Starts the request's SERVER span (when tracing is on), continuing the trace of an incoming
 * `traceparent`: the one sampling decision of the request. The span travels on `request.trace`
 * and ends in endServerSpan() when the response closes.
 */
export function startServerSpan(request: TracedRequest): void {
  if (!tracer) return;
  const route = request.route?.url;
  const name = route ? `${request.method} ${route}` : request.method;
  const incoming = request.headers.traceparent;
  const remote = incoming === undefined ? null : parentOfTraceparent(String(incoming), request.headers.tracestate);
  const context = remote ? trace.setSpan(ROOT_CONTEXT, remote) : ROOT_CONTEXT;
  const traceId = remote ? remote.spanContext().traceId : newTraceId();
  if (sampler && sampler.shouldSample(context, traceId, name, SpanKind.SERVER, NO_ATTRIBUTES, NO_LINKS).decision === SamplingDecision.NOT_RECORD) {
    request.trace = trace.wrapSpanContext({ traceId, spanId: newSpanId(), traceFlags: TraceFlags.NONE, traceState: remote?.spanContext().traceState });
    return;
  }
  if (!remote) ids.nextTraceId = traceId;
  const span = tracer.startSpan(name, { kind: SpanKind.SERVER }, context);
  ids.nextTraceId = '';
  request.trace = span;
  if (!span.isRecording()) return;
  const host = hostAndPort(request.headers.host);
  const attributes: Attributes = {
    'http.request.method': request.method,
    'url.path': pathOf(request.url),
    'url.scheme': request.protocol,
  };
  if (route) attributes['http.route'] = route;
  if (host.address) attributes['server.address'] = host.address;
  if (host.port) attributes['server.port'] = host.port;
  const agent = request.headers['user-agent'];
  if (agent) attributes['user_agent.original'] = redact(agent.slice(0, 256));
  span.setAttributes(attributes);
}

/** The response closed (`status` 0: nothing was sent, the client left first). */
export function endServerSpan(request: TracedRequest, status: number, finished: boolean): void {
  const span = request.trace;
  if (!span?.isRecording()) return;
  if (request.principal) span.setAttribute('mediagate.key_id', request.principal.keyId);
  if (status) span.setAttribute('http.response.status_code', status);
  if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
  if (!finished) span.addEvent('client closed the connection');
  span.end();
}

export interface SpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
  links?: Link[];
  startTime?: number;
}

/** A span started now under `parent` (ended by the caller); null when tracing is off or the trace is not sampled. */
export function childSpan(parent: TraceParent | null | undefined, name: string, opts: SpanOptions = {}): Span | null {
  if (!tracer || !sampled(parent)) return null;
  return tracer.startSpan(name, { kind: opts.kind ?? SpanKind.INTERNAL, attributes: opts.attributes, links: opts.links, startTime: opts.startTime }, trace.setSpan(ROOT_CONTEXT, parent));
}

/** A trace of its own (a video task): its root span, sampled by the configured sampler; null when tracing is off. */
export function rootSpan(name: string, opts: SpanOptions = {}): Span | null {
  if (!tracer) return null;
  return tracer.startSpan(name, { kind: opts.kind ?? SpanKind.INTERNAL, attributes: opts.attributes, links: opts.links, root: true, startTime: opts.startTime }, ROOT_CONTEXT);
}

/**
 * Runs `fn` inside a span named `name` under `parent` (when its trace is sampled): a throw marks
 * the span an error with its redacted message, and the span ends when `fn` settles.
 */
export async function inSpan<T>(parent: TraceParent | null | undefined, name: string, opts: SpanOptions, fn: (span: Span | null) => Promise<T>): Promise<T> {
  const span = childSpan(parent, name, opts);
  if (!span) return fn(null);
  try {
    return await fn(span);
  } catch (err) {
    failSpan(span, err);
    throw err;
  } finally {
    span.end();
  }
}

/** Marks a span failed, with the error's redacted message (never a credential). */
export function failSpan(span: Span, err: unknown): void {
  const message = redact(err instanceof Error ? err.message : String(err)).slice(0, 512);
  const kind = (err as { kind?: unknown } | null)?.kind;
  span.setAttribute('error.type', typeof kind === 'string' ? kind : err instanceof Error ? err.constructor.name : 'error');
  span.setStatus({ code: SpanStatusCode.ERROR, message });
}

/** A W3C `traceparent` for a span context. */
export function traceparentOf(ctx: SpanContext): string {
  return `00-${ctx.traceId}-${ctx.spanId}-0${(ctx.traceFlags & 1).toString(16)}`;
}

/**
 * The `traceparent` an outgoing request carries under `parent`: its own span's when one is
 * recorded (`span`), else a new span id in the parent's trace with the sampled flag off ('' when
 * tracing is off).
 */
export function outgoingTraceparent(parent: TraceParent | null | undefined, span?: Span | null): string {
  if (span) return traceparentOf(span.spanContext());
  if (!tracer || !parent) return '';
  return `00-${parent.spanContext().traceId}-${newSpanId()}-00`;
}

/**
 * The `tracestate` an outgoing request under `parent` carries: the incoming one, passed on as W3C
 * Trace Context asks of every participant ('' when there is none or tracing is off).
 */
export function outgoingTracestate(parent: TraceParent | null | undefined): string {
  if (!tracer || !parent) return '';
  return parent.spanContext().traceState?.serialize() ?? '';
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/** 4 random bytes as hex (`low`: never all zeros). */
function hex4(low = false): string {
  const n = low ? ((Math.random() * 0xffffffff) >>> 0) + 1 : (Math.random() * 0x100000000) >>> 0;
  return HEX[n >>> 24] + HEX[(n >>> 16) & 255] + HEX[(n >>> 8) & 255] + HEX[n & 255];
}

/** A random 8-byte span id, as hex (never all zeros). */
function newSpanId(): string {
  return hex4() + hex4(true);
}

/** A random 16-byte trace id, as hex (never all zeros). */
function newTraceId(): string {
  return hex4() + hex4() + hex4() + hex4(true);
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);

/** The parent a stored or received `traceparent` names (a non-recording span; null when it is empty or malformed). */
export function parentOfTraceparent(value: string, tracestate?: string | string[]): TraceParent | null {
  const m = TRACEPARENT.exec(value.trim());
  if (!m || m[1] === ZERO_TRACE || m[2] === ZERO_SPAN) return null;
  const state = typeof tracestate === 'string' && tracestate ? createTraceState(tracestate) : undefined;
  return trace.wrapSpanContext({ traceId: m[1], spanId: m[2], traceFlags: parseInt(m[3], 16) & 1, isRemote: true, traceState: state });
}

/**
 * The trace id a request is logged under: its server span's when tracing is on, else the
 * incoming traceparent's, else a random one.
 */
export function requestTraceId(request: TracedRequest): string {
  if (request.trace) return request.trace.spanContext().traceId;
  return traceIdOfTraceparent(request.headers.traceparent) || newTraceId();
}

/** The trace id of a traceparent header ('' when absent or malformed). */
export function traceIdOfTraceparent(value: string | string[] | undefined): string {
  const m = typeof value === 'string' ? TRACEPARENT.exec(value.trim()) : null;
  return m && m[1] !== ZERO_TRACE ? m[1] : '';
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

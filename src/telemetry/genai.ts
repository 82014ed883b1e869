import type { Attributes } from '@opentelemetry/api';
import { SpanKind, childSpan, failSpan, outgoingTraceparent, outgoingTracestate, sampled, type Span, type TraceParent } from './trace.js';
import { AttemptSeries } from './meter.js';

// The OpenTelemetry GenAI conventions on the gateway's upstream attempts: one CLIENT span per
// attempt named "{gen_ai.operation.name} {gen_ai.request.model}", with the provider, the channel
// and, on the attempt that answered, the tokens, finish reasons and cost.

/** gen_ai.provider.name for a channel type: the conventions' well-known value, else the type itself. */
const PROVIDER_NAMES: Record<string, string> = {
  openai: 'openai',
  anthropic: 'anthropic',
  gemini: 'gcp.gemini',
  vertex: 'gcp.vertex_ai',
  xai: 'x_ai',
  deepseek: 'deepseek',
  mistral: 'mistral_ai',
  groq: 'groq',
};

export function providerName(channelType: string): string {
  return PROVIDER_NAMES[channelType] ?? channelType;
}

/** gen_ai.operation.name for a model kind: chat for chat, generate_content for images and video. */
export function operationName(kind: string): string {
  return kind === 'chat' ? 'chat' : 'generate_content';
}

export interface AttemptTarget {
  channel: { name: string; type: string };
  baseUrl: string;
}

/** One attempt: its span (null when the trace is not sampled), its traceparent and its metric series. */
export interface Attempt {
  span: Span | null;
  /** The W3C traceparent the upstream request carries (the span's, or one with the sampled flag off). */
  traceparent: string;
  /** The W3C tracestate it carries: the incoming request's ('' when it sent none). */
  tracestate: string;
  metrics: AttemptSeries;
  started: number;
}

/** What every attempt of one model on one channel shares: its metric series and span attributes. */
interface AttemptShape {
  kind: string;
  baseUrl: string;
  /** The span's name: "{operation} {model}". */
  spanName: string;
  /** What every attempt's span starts with: the metric attributes, the channel and the port. */
  spanAttributes: Attributes;
  metrics: AttemptSeries;
}

/**
 * Shapes by channel (its config object, replaced on a reload) and model: built on a channel's first
 * attempt for a model, so an attempt builds no attributes, keys or URLs of its own.
 */
const shapes = new WeakMap<object, Map<string, AttemptShape>>();
function shapeOf(kind: string, model: string, target: AttemptTarget): AttemptShape {
  let byModel = shapes.get(target.channel);
  if (!byModel) shapes.set(target.channel, (byModel = new Map()));
  let shape = byModel.get(model);
  if (!shape || shape.kind !== kind || shape.baseUrl !== target.baseUrl) {
    const operation = operationName(kind);
    const metricAttributes: Attributes = {
      'gen_ai.operation.name': operation,
      'gen_ai.provider.name': providerName(target.channel.type),
      'gen_ai.request.model': model,
    };
    let port: number | null = null;
    try {
      // Host and port only: a URL's path or query may carry a credential (Gemini's ?key=).
      const url = new URL(target.baseUrl);
      metricAttributes['server.address'] = url.hostname;
      port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
    } catch {
      // A base URL that does not parse has no address to report.
    }
    // The series' key: the attribute values joined (one string per shape, so lookups reuse its hash).
    const metrics = new AttemptSeries(Object.values(metricAttributes).join('\n'), metricAttributes);
    const spanAttributes: Attributes = { ...metricAttributes, 'mediagate.channel': target.channel.name };
    if (port !== null) spanAttributes['server.port'] = port;
    byModel.set(model, (shape = { kind, baseUrl: target.baseUrl, spanName: `${operation} ${model}`, spanAttributes, metrics }));
  }
  return shape;
}

/** The attempts whose spans record, by the target object of the attempt (for markFirstToken). */
const recording = new WeakMap<object, Attempt>();

/**
 * Starts an attempt under `parent` (the request's server span): a CLIENT span when the trace is
 * sampled, and the traceparent its upstream request carries either way.
 */
export function startAttempt(parent: TraceParent, kind: string, model: string, target: AttemptTarget, attempt: number, keyId?: string): Attempt {
  const shape = shapeOf(kind, model, target);
  let span: Span | null = null;
  if (sampled(parent)) {
    // The shape's attributes as they are (the SDK copies them), the attempt's own set on the span.
    span = childSpan(parent, shape.spanName, { kind: SpanKind.CLIENT, attributes: shape.spanAttributes });
    if (span) {
      span.setAttribute('mediagate.attempt', attempt);
      if (keyId) span.setAttribute('mediagate.key_id', keyId);
    }
  }
  const out = { span, traceparent: outgoingTraceparent(parent, span), tracestate: outgoingTracestate(parent), metrics: shape.metrics, started: performance.now() };
  if (span) recording.set(target, out);
  return out;
}

/** A stream's first token went to the client: an event on the span of the attempt serving `target`. */
export function markFirstToken(target: object): void {
  recording.get(target)?.span?.addEvent('gen_ai.first_token');
}

/** The attempt failed: the span is marked and ended, its duration recorded with the error type. */
export function failAttempt(attempt: Attempt, err: unknown): void {
  if (attempt.span) {
    failSpan(attempt.span, err);
    attempt.span.end();
  }
  const kind = (err as { kind?: unknown } | null)?.kind;
  attempt.metrics.operation((performance.now() - attempt.started) / 1000, typeof kind === 'string' ? kind : 'error');
}

/** What the answering attempt came to. */
export interface AttemptResult {
  status: number;
  input?: number;
  output?: number;
  costMicros?: number;
  responseModel?: string;
  finishReasons?: string[];
  taskId?: string;
}

/** The answering attempt is over (its answer used): usage and cost on the span, then it ends. */
export function endAttempt(attempt: Attempt, kind: string, result: AttemptResult): void {
  const span = attempt.span;
  if (span) {
    if (result.responseModel) span.setAttribute('gen_ai.response.model', result.responseModel);
    if (result.finishReasons?.length) span.setAttribute('gen_ai.response.finish_reasons', result.finishReasons);
    if (kind === 'chat') {
      if (result.input !== undefined) span.setAttribute('gen_ai.usage.input_tokens', result.input);
      if (result.output !== undefined) span.setAttribute('gen_ai.usage.output_tokens', result.output);
    }
    if (result.costMicros !== undefined) span.setAttribute('mediagate.cost_usd', result.costMicros / 1e6);
    if (result.taskId) span.setAttribute('mediagate.task_id', result.taskId);
    span.setAttribute('mediagate.status', result.status);
    span.end();
  }
  if (kind === 'chat') attempt.metrics.tokens(result.input, result.output);
  // Without gen_ai.response.model: it is read from the answer only when the trace is sampled.
  attempt.metrics.operation((performance.now() - attempt.started) / 1000);
}

import type { Attributes } from '@opentelemetry/api';
import { SpanKind, failSpan, startSpan, type Span } from './trace.js';
import { recordOperation, recordTokens } from './meter.js';

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

/** One attempt's span and the attributes its metrics share. */
export interface Attempt {
  span: Span;
  metricAttributes: Attributes;
  started: number;
}

/** Starts an attempt's CLIENT span (a child of the active span: the request's, or a task poll's). */
export function startAttempt(kind: string, model: string, target: AttemptTarget, attempt: number): Attempt {
  const operation = operationName(kind);
  const metricAttributes: Attributes = {
    'gen_ai.operation.name': operation,
    'gen_ai.provider.name': providerName(target.channel.type),
    'gen_ai.request.model': model,
  };
  const attributes: Attributes = { ...metricAttributes, 'mediagate.channel': target.channel.name, 'mediagate.attempt': attempt };
  try {
    // Host and port only: a URL's path or query may carry a credential (Gemini's ?key=).
    const url = new URL(target.baseUrl);
    attributes['server.address'] = url.hostname;
    attributes['server.port'] = Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
    metricAttributes['server.address'] = url.hostname;
  } catch {
    // A base URL that does not parse has no address to report.
  }
  return { span: startSpan(`${operation} ${model}`, { kind: SpanKind.CLIENT, attributes }), metricAttributes, started: performance.now() };
}

/** The attempt failed: the span is marked and ended, its duration recorded with the error type. */
export function failAttempt(attempt: Attempt, err: unknown): void {
  failSpan(attempt.span, err);
  attempt.span.end();
  const kind = (err as { kind?: unknown } | null)?.kind;
  recordOperation(attempt.metricAttributes, (performance.now() - attempt.started) / 1000, typeof kind === 'string' ? kind : 'error');
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
  if (result.responseModel) span.setAttribute('gen_ai.response.model', result.responseModel);
  if (result.finishReasons?.length) span.setAttribute('gen_ai.response.finish_reasons', result.finishReasons);
  if (kind === 'chat') {
    if (result.input !== undefined) span.setAttribute('gen_ai.usage.input_tokens', result.input);
    if (result.output !== undefined) span.setAttribute('gen_ai.usage.output_tokens', result.output);
    recordTokens(attempt.metricAttributes, result.input, result.output);
  }
  if (result.costMicros !== undefined) span.setAttribute('mediagate.cost_usd', result.costMicros / 1e6);
  if (result.taskId) span.setAttribute('mediagate.task_id', result.taskId);
  span.setAttribute('mediagate.status', result.status);
  span.end();
  recordOperation(result.responseModel ? { ...attempt.metricAttributes, 'gen_ai.response.model': result.responseModel } : attempt.metricAttributes, (performance.now() - attempt.started) / 1000);
}

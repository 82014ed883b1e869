import type { Attributes } from '@opentelemetry/api';
import { childSpan, inSpan, type TraceParent, outgoingTraceparent, parentOfTraceparent, rootSpan, sampled, traceparentOf, tracingOn, SpanKind, SpanStatusCode } from './trace.js';
import { operationName, providerName } from './genai.js';

// A video task is a trace of its own: a root span at create (linked to the request that created
// it), whose traceparent the task row keeps, so every poll, provider callback and the final status
// join that trace on whichever instance handles them, after a restart too.

/** What of a task row its spans read. */
export interface TracedTask {
  task_id: string;
  model: string;
  channel: string;
  status: string;
  trace_parent: string;
}

/** The GenAI and gateway attributes of a task's root and end spans. */
function taskAttributes(task: Pick<TracedTask, 'task_id' | 'model' | 'channel'>, channelType: string): Attributes {
  return {
    'gen_ai.operation.name': operationName('video'),
    'gen_ai.provider.name': providerName(channelType),
    'gen_ai.request.model': task.model,
    'mediagate.task_id': task.task_id,
    'mediagate.channel': task.channel,
  };
}

/**
 * Starts the task's trace (when tracing is on): its root span, linked to the upstream attempt that
 * created it (`createdBy`, that attempt's traceparent, when its trace is sampled), ends at once;
 * returns its traceparent for the row ('' when tracing is off).
 */
export function startTaskTrace(task: Omit<TracedTask, 'trace_parent' | 'status'> & { key_id: string }, channelType: string, createdBy?: string): string {
  if (!tracingOn()) return '';
  const request = createdBy ? parentOfTraceparent(createdBy) : null;
  const span = rootSpan(`video_task ${task.model}`, {
    kind: SpanKind.INTERNAL,
    links: sampled(request) ? [{ context: request.spanContext(), attributes: { 'mediagate.link': 'created_by' } }] : [],
    attributes: { ...taskAttributes(task, channelType), 'mediagate.key_id': task.key_id },
  });
  if (!span) return '';
  span.end();
  return traceparentOf(span.spanContext());
}

/** The task's trace, for work done in it outside a span of its own (its hold's settle or release); null when tracing is off. */
export function taskTrace(task: Pick<TracedTask, 'trace_parent'>): TraceParent | null {
  return tracingOn() && task.trace_parent ? parentOfTraceparent(task.trace_parent) : null;
}

/**
 * Runs `fn` (a poll, a callback) as a span in the task's trace (when it is sampled); its status
 * after is recorded. `fn` is given the traceparent its upstream requests carry ('' when tracing is off).
 */
export function inTaskSpan<T extends { status: string }>(name: string, task: TracedTask, fn: (traceparent: string) => Promise<T>, attributes: Attributes = {}): Promise<T> {
  const parent = tracingOn() && task.trace_parent ? parentOfTraceparent(task.trace_parent) : null;
  if (!parent) return fn('');
  if (!sampled(parent)) return fn(outgoingTraceparent(parent));
  return inSpan(parent, name, { attributes: { 'mediagate.task_id': task.task_id, 'mediagate.channel': task.channel, 'mediagate.task.status_before': task.status, ...attributes } }, async (span) => {
    const after = await fn(outgoingTraceparent(parent, span));
    span?.setAttribute('mediagate.task.status', after.status);
    return after;
  });
}

/**
 * The task moved to a terminal status: a span in its trace from its submit time to now, so the
 * trace covers the task from create to its end.
 */
export function endTaskTrace(task: TracedTask & { submit_time: number; fail_reason: string }, channelType: string, now: number): void {
  if (!tracingOn() || !task.trace_parent) return;
  const span = childSpan(parentOfTraceparent(task.trace_parent), `video_task ${task.status}`, {
    startTime: task.submit_time * 1000,
    attributes: { ...taskAttributes(task, channelType), 'mediagate.task.status': task.status },
  });
  if (!span) return;
  if (task.status === 'FAILURE') span.setStatus({ code: SpanStatusCode.ERROR, message: task.fail_reason.split(':')[0] });
  span.end(now);
}

import type { Config } from '../config/schema.js';
import { newFacts, stopFacts, type RequestFacts } from '../http/request-facts.js';
import type { RequestLogsRepo } from '../store/repos/request-logs.js';
import { requestTraceId, type TracedRequest } from '../telemetry/trace.js';
import { storedBody } from './bodies.js';

// The request log writer: one row per model request (a billable route), written when both its
// response closed and its usage row is known (a stream's usage comes after its last byte), so
// the row holds what the ledger holds plus the trace id and, when enabled, the bodies.

/** The longest a closed request's row waits for its usage (a task's create, a queued image). */
const USAGE_WAIT_MS = 60_000;

export interface LoggedRequest extends TracedRequest {
  readonly body: unknown;
  readonly usageModel: string;
  readonly route: { readonly url: string; readonly options: { readonly billable?: string } } | null;
}

export interface RequestEnd {
  status: number;
  latencyMs: number;
}

export class RequestLogWriter {
  /** Whether a request was given facts since the logs were last seen off. */
  private gathering = false;

  constructor(
    private readonly repo: RequestLogsRepo,
    private readonly settings: () => Config['request_logs'],
    private readonly onError: (err: unknown) => void,
  ) {}

  /** Facts to gather for this request, or null when it is not logged (logs off, not a model request). */
  factsFor(request: LoggedRequest): RequestFacts | null {
    if (!this.settings().enabled) {
      // Turned off by a reload: the facts' async context is let go, so requests stop paying for it.
      if (this.gathering) stopFacts();
      this.gathering = false;
      return null;
    }
    if (!request.route?.options.billable) return null;
    this.gathering = true;
    return newFacts();
  }

  /** The request's response closed: its row is written now, or once its usage is known. */
  closed(request: LoggedRequest, facts: RequestFacts, end: RequestEnd): void {
    // Read now: the server span is gone once the response closed.
    const traceId = requestTraceId(request);
    const insert = () => void this.write(request, facts, end, traceId).catch(this.onError);
    if (facts.usage) return insert();
    const timer = setTimeout(() => {
      facts.onUsage = null;
      insert();
    }, USAGE_WAIT_MS);
    timer.unref();
    facts.onUsage = () => {
      facts.onUsage = null;
      clearTimeout(timer);
      insert();
    };
  }

  private async write(request: LoggedRequest, facts: RequestFacts, end: RequestEnd, traceId: string): Promise<void> {
    const s = this.settings();
    const usage = facts.usage;
    const keyId = request.principal?.keyId ?? '';
    const model = usage?.model ?? (modelOf(request.body) || request.usageModel);
    const bodies = s.body_keys.includes(keyId) || s.body_models.includes(model);
    await this.repo.insert({
      created_at: Date.now(),
      trace_id: traceId,
      key_id: keyId,
      model,
      channel: usage?.channel ?? '',
      endpoint: usage?.endpoint ?? request.route?.options.billable ?? '',
      route: request.route?.url ?? '',
      status: usage?.status ?? end.status,
      latency_ms: Math.round(usage?.latency_ms ?? end.latencyMs),
      input_units: usage?.input_units ?? 0,
      output_units: usage?.output_units ?? 0,
      cost_micros: usage?.cost_micros ?? 0,
      request_body: bodies ? requestBody(request, s.max_body_bytes) : '',
      response_body: bodies ? (facts.response === null ? '[stream]' : storedBody(facts.response, s.max_body_bytes)) : '',
    });
  }

  /** Deletes the rows past the retention; returns how many. */
  sweep(now = Date.now()): Promise<number> {
    return this.repo.deleteBefore(now - this.settings().retention_days * 86_400_000);
  }
}

function modelOf(body: unknown): string {
  const model = body && typeof body === 'object' && !Buffer.isBuffer(body) ? (body as { model?: unknown }).model : undefined;
  return typeof model === 'string' ? model.slice(0, 200) : '';
}

function requestBody(request: LoggedRequest, max: number): string {
  // A multipart form (an image edit's upload) is read by its route, not kept.
  if (request.body === undefined && String(request.headers['content-type'] ?? '').startsWith('multipart/')) return '[multipart form]';
  return storedBody(request.body, max);
}

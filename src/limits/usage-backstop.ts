import type { UsageLedger } from './ledger.js';
import type { ServerResponse } from 'node:http';
import type { Principal } from '../auth/principal.js';
import { whenClosed, type Departing } from '../http/departure.js';

/**
 * Called by routes whose body the hook cannot read (multipart) as soon as the request names its
 * model, so a refusal that follows (a non-image file) is recorded under that model.
 */
export function noteUsageModel(request: { usageModel: string }, model: string): void {
  request.usageModel = model.slice(0, 200);
}

/** Called wherever a request's usage row is written. */
export function markUsageRecorded(request: { usageRecorded: boolean }): void {
  request.usageRecorded = true;
}

/**
 * Claims the request's one usage row: true for the first caller, false once a row was written (a
 * client that left is recorded by whoever notices first: the route, or the abort hook below).
 */
export function claimUsageRow(request: { usageRecorded: boolean }): boolean {
  if (request.usageRecorded) return false;
  request.usageRecorded = true;
  return true;
}

/** What the backstop reads of a request. */
export interface BackstopSubject extends Departing {
  method: string;
  principal: Principal | null;
  usageRecorded: boolean;
  usageModel: string;
  /** The message the request was answered with (its error). */
  usageError: string;
  reachedRoute: boolean;
  body: unknown;
}

type Ledger = Pick<UsageLedger, 'record'>;

/**
 * The row of an authenticated request to a billable route (`billable`: its ledger endpoint name,
 * undefined for a route that is not billable) that no route recorded: no units, no cost.
 */
export function recordBackstop(ledger: Ledger, request: BackstopSubject, billable: string | undefined, status: number, latencyMs: number): void {
  if (!billable || !request.principal || !claimUsageRow(request)) return;
  const body = request.body as { model?: unknown } | null | undefined;
  ledger.record({
    key_id: request.principal.keyId,
    model: body && typeof body === 'object' && typeof body.model === 'string' ? body.model.slice(0, 200) : request.usageModel,
    channel: '',
    endpoint: billable,
    status,
    input_units: 0,
    output_units: 0,
    cost_micros: 0,
    latency_ms: Math.round(latencyMs),
    error: status === 499 ? 'The client closed the request before the answer.' : request.usageError,
  });
}

/**
 * A client that left while its key was checked or its body read can leave the request stuck short
 * of any route (its body stream closed without an error): if no route took it up shortly after the
 * client left, its 499 row is written. A route that started records its own.
 */
export function watchUnrouted(request: BackstopSubject, res: ServerResponse, departed: () => void): void {
  if (request.method !== 'POST') return;
  whenClosed(request, () => {
    if (res.writableFinished) return;
    setTimeout(() => {
      if (!request.reachedRoute) departed();
    }, 500).unref();
  });
}

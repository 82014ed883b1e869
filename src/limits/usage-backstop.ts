import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { UsageLedger } from './ledger.js';
import type { ServerResponse } from 'node:http';
import type { Principal } from '../auth/principal.js';
import { whenClosed, type Departing } from '../http/departure.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** A usage row for this request was written (or its route has taken charge of writing it). */
    usageRecorded: boolean;
    /** The request got as far as its route's handler (preHandler ran). */
    reachedRoute: boolean;
    /** The model a body that is not JSON named (a multipart `model` field), for the refusal row. */
    usageModel: string;
  }
  interface FastifyContextConfig {
    /**
     * The route is billable: its ledger endpoint name (as its metered call writes it). Every
     * authenticated request to it gets one ledger row, the ones refused before the hold included.
     */
    billable?: string;
  }
}

/**
 * The ledger endpoint of a request's route: its billable name, else its pattern (a rate-limit
 * refusal of any route is recorded).
 */
export function ledgerEndpointOf(request: FastifyRequest): string {
  return request.routeOptions.config?.billable ?? request.routeOptions.url ?? '';
}

/**
 * Called by routes whose body the hook cannot read (multipart) as soon as the request names its
 * model, so a refusal that follows (a non-image file) is recorded under that model.
 */
export function noteUsageModel(request: FastifyRequest, model: string): void {
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

/** What the backstop reads of a request (a FastifyRequest, or the front door's). */
export interface BackstopSubject extends Departing {
  method: string;
  principal: Principal | null;
  usageRecorded: boolean;
  usageModel: string;
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

/**
 * One ledger row per request: routes write the rows of requests that reached the credit hold (with
 * units, cost and channel); this hook writes the row of an authenticated request to a billable
 * route (`config.billable`) that was refused before that (bad body, unknown or forbidden model, no
 * credit), with no units and no cost. A request without a valid key has no key to record.
 */
export function registerUsageBackstop(app: FastifyInstance, ledger: Ledger): { departed(request: FastifyRequest): void } {
  app.decorateRequest('usageRecorded', false);
  app.decorateRequest('usageModel', '');
  app.addHook('onResponse', (request, reply, done) => {
    if (reply.statusCode >= 400) recordBackstop(ledger, request, request.routeOptions.config?.billable, reply.statusCode, reply.elapsedTime);
    done();
  });
  // A client gone before its request reached a route that records (while its key was checked or its
  // body read): 499, nginx's "client closed request".
  // Fastify keeps no arrival time for a request that never got a reply; its latency is unknown.
  const departed = (request: FastifyRequest) => recordBackstop(ledger, request, request.routeOptions.config?.billable, 499, 0);
  app.addHook('onRequestAbort', (request, done) => {
    departed(request);
    done();
  });
  app.decorateRequest('reachedRoute', false);
  app.addHook('preHandler', (request, _reply, done) => {
    request.reachedRoute = true;
    done();
  });
  app.addHook('onRequest', (request, reply, done) => {
    watchUnrouted(request, reply.raw, () => departed(request));
    done();
  });
  // For the app's error handler: a request that failed because its client left (its body could
  // not be read to the end) is a 499 too, and no response will tell onResponse.
  return { departed };
}

import type { FastifyBaseLogger } from 'fastify';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { Principal } from '../auth/principal.js';
import type { Departing, DepartureSignal } from '../http/departure.js';

// What a route handler written for both doors reads of its request and does with its reply: Fastify's
// FastifyRequest/FastifyReply have these members, and so do the front door's (src/front-door.ts),
// which serves the hottest routes without Fastify's request cycle.

export interface ExchangeRequest extends Departing {
  readonly headers: IncomingHttpHeaders;
  body: unknown;
  principal: Principal | null;
  /** A usage row for this request was written (or its route has taken charge of writing it). */
  usageRecorded: boolean;
  /** Aborted when the client goes away before its answer was complete. */
  readonly departed: DepartureSignal;
  readonly log: FastifyBaseLogger;
}

export interface ExchangeReply {
  readonly raw: ServerResponse;
  header(name: string, value: string): ExchangeReply;
  send(payload?: string | Buffer): ExchangeReply;
  /** The handler writes the response itself (a stream). */
  hijack(): ExchangeReply;
  getHeaders(): Record<string, number | string | string[] | undefined>;
}

/** The front door's requests: an exchange request with its path parameters and where it came in. */
export interface FrontExchangeRequest extends ExchangeRequest {
  params: Record<string, string>;
  /** As Fastify without trustProxy: the connection's protocol and the Host header. */
  readonly protocol: 'http' | 'https';
  readonly host: string;
}

/** A route the front door (src/front-door.ts) serves; Fastify keeps its own registration of it for every other form. */
export interface FrontRoute {
  method: 'GET' | 'POST';
  /** The exact path, also the route's pattern for metrics and the ledger; `/…/:name` for a last segment taken as a parameter. */
  url: string;
  /** The ledger endpoint name of a billable route, as Fastify's registration of it declares (`config.billable`). */
  billable?: string;
  /** POST: the JSON schema of the body (Fastify's route schema; validated with Fastify's own Ajv). */
  bodySchema?: object;
  handle(request: FrontExchangeRequest, reply: ExchangeReply): unknown;
}

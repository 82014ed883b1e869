import type { FastifyBaseLogger } from 'fastify';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { Principal } from '../auth/principal.js';
import type { Departing } from './departure.js';

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
  readonly departed: AbortSignal;
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

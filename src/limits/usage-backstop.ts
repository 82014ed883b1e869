import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { UsageLedger } from './ledger.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** A usage row for this request was written (or its route has taken charge of writing it). */
    usageRecorded: boolean;
    /** The model a body that is not JSON named (a multipart `model` field), for the refusal row. */
    usageModel: string;
  }
}

// Ledger endpoint names as the routes write them.
export const LEDGER_ENDPOINTS: Record<string, string> = {
  '/v1/chat/completions': 'chat',
  '/v1/messages': 'messages',
  '/v1/images/generations': 'images.generations',
  '/v1/images/edits': 'images.edits',
  '/v1/video/generations': 'video',
};

/**
 * Called by routes whose body the hook cannot read (multipart) as soon as the request names its
 * model, so a refusal that follows (a non-image file) is recorded under that model.
 */
export function noteUsageModel(request: FastifyRequest, model: string): void {
  request.usageModel = model.slice(0, 200);
}

/** Called wherever a request's usage row is written. */
export function markUsageRecorded(request: FastifyRequest): void {
  request.usageRecorded = true;
}

/**
 * One ledger row per request: routes write the rows of requests that reached the credit hold (with
 * units, cost and channel); this hook writes the row of an authenticated request to a billable
 * endpoint that was refused before that (bad body, unknown or forbidden model, no credit), with no
 * units and no cost. A request without a valid key has no key to record.
 */
export function registerUsageBackstop(app: FastifyInstance, ledger: Pick<UsageLedger, 'record'>): void {
  app.decorateRequest('usageRecorded', false);
  app.decorateRequest('usageModel', '');
  app.addHook('onResponse', (request, reply, done) => {
    // Billable requests are POSTs; a refused read (GET of the task list at the same path) costs nothing to record.
    if (reply.statusCode >= 400 && request.method === 'POST' && request.principal && !request.usageRecorded) {
      const endpoint = LEDGER_ENDPOINTS[request.routeOptions.url ?? ''];
      if (endpoint) {
        const body = request.body as { model?: unknown } | null | undefined;
        ledger.record({
          key_id: request.principal.keyId,
          model: body && typeof body === 'object' && typeof body.model === 'string' ? body.model.slice(0, 200) : request.usageModel,
          channel: '',
          endpoint,
          status: reply.statusCode,
          input_units: 0,
          output_units: 0,
          cost_micros: 0,
          latency_ms: Math.round(reply.elapsedTime),
        });
      }
    }
    done();
  });
}

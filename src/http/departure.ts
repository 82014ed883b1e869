import type { FastifyInstance, FastifyRequest } from 'fastify';

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * Aborted when the client goes away before its answer was complete. Set from the request's
     * first moment, so a client that leaves while the gateway reads its body, checks its key or
     * holds its credit is noticed before any upstream call is made for nobody.
     */
    departed: AbortSignal;
  }
}

export function registerDepartureSignal(app: FastifyInstance): void {
  app.decorateRequest('departed', null as unknown as AbortSignal);
  app.addHook('onRequest', async (request, reply) => {
    const ac = new AbortController();
    reply.raw.once('close', () => {
      if (!reply.raw.writableFinished) ac.abort();
    });
    request.departed = ac.signal;
  });
}

/** true when the client has already left: the caller answers nobody and calls no upstream. */
export function clientGone(request: FastifyRequest): boolean {
  // The socket's own state too: its 'close' may not have reached the response's listener yet.
  const socket = request.raw.socket as { destroyed?: boolean; readableEnded?: boolean } | null;
  return request.departed?.aborted === true || socket?.destroyed === true || socket?.readableEnded === true;
}

/**
 * Whether the client is still there, asked just before the upstream call. A request can go from
 * its arrival through the credit hold to the upstream call within one turn of the event loop (a
 * SQLite hold completes synchronously), before the loop has read the client's FIN or RST that
 * arrived right behind the request: passing the loop's I/O phase first (setImmediate, microseconds)
 * lets the departure be seen.
 */
export async function clientStillThere(signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return false;
  // Two turns: called from the loop's check phase, the first already crosses an I/O phase; called
  // from the I/O phase itself, the first only reaches this turn's check phase.
  for (let i = 0; i < 2 && !signal.aborted; i++) await new Promise<void>((resolve) => setImmediate(resolve));
  return !signal.aborted;
}

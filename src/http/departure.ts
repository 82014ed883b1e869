import type { FastifyInstance, FastifyRequest } from 'fastify';

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * Aborted when the client goes away before its answer was complete. Watched from the request's
     * first moment, so a client that leaves while the gateway reads its body, checks its key or
     * holds its credit is noticed before any upstream call is made for nobody.
     */
    departed: AbortSignal;
  }
}

/** Whether the client left, the signal of it once a route asked for one, and what runs when the response closes. */
interface Departure {
  gone: boolean;
  controller: AbortController | null;
  /** Set once the response closed (sent whole, or the client left). */
  closed: boolean;
  onClose: (() => void)[] | null;
}

const DEPARTURE = Symbol('departure');
type Watched = FastifyRequest & { [DEPARTURE]?: Departure };

function departureOf(request: FastifyRequest): Departure {
  return ((request as Watched)[DEPARTURE] ??= { gone: false, controller: null, closed: false, onClose: null });
}

export function registerDepartureSignal(app: FastifyInstance): void {
  // The AbortController is made only for a route that reads `departed` (chat, images, video
  // create): a read endpoint never pays for one. One made after the client left starts aborted.
  app.decorateRequest('departed', {
    getter(this: FastifyRequest): AbortSignal {
      const d = departureOf(this);
      if (!d.controller) {
        d.controller = new AbortController();
        if (d.gone) d.controller.abort();
      }
      return d.controller.signal;
    },
  });
  // The one 'close' listener of a response: the rate limits' slot release and the usage backstop
  // register with whenClosed() instead of adding their own.
  app.addHook('onRequest', (request, reply, done) => {
    const d = departureOf(request);
    reply.raw.once('close', () => {
      d.closed = true;
      if (!reply.raw.writableFinished) {
        d.gone = true;
        d.controller?.abort();
      }
      const run = d.onClose;
      d.onClose = null;
      if (run) for (const fn of run) fn();
    });
    done();
  });
}

/**
 * Runs `fn` once when the request's response closes — sent whole or abandoned by the client (ask
 * clientGone() which) — or at once when it already has. Hooks registered after
 * registerDepartureSignal only.
 */
export function whenClosed(request: FastifyRequest, fn: () => void): void {
  const d = departureOf(request);
  if (d.closed) fn();
  else (d.onClose ??= []).push(fn);
}

/** true when the client has already left: the caller answers nobody and calls no upstream. */
export function clientGone(request: FastifyRequest): boolean {
  // The socket's own state too: its 'close' may not have reached the response's listener yet.
  const socket = request.raw.socket as { destroyed?: boolean; readableEnded?: boolean } | null;
  return (request as Watched)[DEPARTURE]?.gone === true || socket?.destroyed === true || socket?.readableEnded === true;
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

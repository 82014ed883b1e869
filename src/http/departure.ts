import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AbortLike } from '../upstream/abort-like.js';

/**
 * What the gateway's chat path needs of a client's departure: whether it happened (and why), and a
 * callback when it does. An AbortSignal is one; so is a LightSignal, which is much cheaper to make
 * per request than an AbortController (the chat path takes it). Code that needs a real AbortSignal
 * (AbortSignal.any, fetch) takes the AbortSignal type.
 */
export type DepartureSignal = AbortLike;

/** A DepartureSignal without EventTarget: listeners run once, in order, when abort() is called. */
export class LightSignal implements DepartureSignal {
  aborted = false;
  reason: unknown = undefined;
  private listeners: (() => void)[] | null = null;

  addEventListener(_type: 'abort', listener: () => void): void {
    if (this.aborted) return;
    (this.listeners ??= []).push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const at = this.listeners?.indexOf(listener) ?? -1;
    if (at >= 0) this.listeners!.splice(at, 1);
  }

  /** Its own signal, as an AbortController's (so the departure keeps one object for both). */
  get signal(): this {
    return this;
  }

  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = new DOMException('This operation was aborted', 'AbortError');
    const run = this.listeners;
    this.listeners = null;
    if (run) for (const fn of run) fn();
  }
}

/** Whether the client left, the signal of it once a route asked for one, and what runs when the response closes. */
interface Departure {
  gone: boolean;
  /** An AbortController or a LightSignal, whichever the route asked for first, made on first ask. */
  controller: { abort(): void; readonly signal: DepartureSignal } | null;
  /** Set once the response closed (sent whole, or the client left). */
  closed: boolean;
  onClose: (() => void)[] | null;
}

const DEPARTURE = Symbol('departure');
/** A request as the pipeline holds it. */
export interface Departing {
  raw: IncomingMessage;
}
type Watched = Departing & { [DEPARTURE]?: Departure };

function departureOf(request: Departing): Departure {
  return ((request as Watched)[DEPARTURE] ??= { gone: false, controller: null, closed: false, onClose: null });
}

/** The request's departure signal, made by `make` on first ask; one made after the client left starts aborted. */
function signalOf<C extends { abort(): void; readonly signal: DepartureSignal }>(request: Departing, make: () => C): C['signal'] {
  const d = departureOf(request);
  if (!d.controller) {
    d.controller = make();
    if (d.gone) d.controller.abort();
  }
  return d.controller.signal as C['signal'];
}

/** The request's departure signal as an AbortSignal (a light one asked for first is aborted with it). */
export function departedSignal(request: Departing): AbortSignal {
  const d = departureOf(request);
  if (d.controller instanceof LightSignal) {
    const light = d.controller;
    const controller = new AbortController();
    // The watch aborts the controller from now on, and the controller the light signal.
    if (light.aborted) controller.abort();
    else controller.signal.addEventListener('abort', () => light.abort(), { once: true });
    d.controller = controller;
    return controller.signal;
  }
  return signalOf(request, () => new AbortController());
}

/** The same as a LightSignal: for handlers that take any DepartureSignal. */
export function lightDepartedSignal(request: Departing): DepartureSignal {
  return signalOf(request, () => new LightSignal());
}

/**
 * The one 'close' listener of a response: marks the client gone when the response closed before it
 * was sent whole, aborts the signal, and runs what whenClosed() registered.
 */
export function watchDeparture(request: Departing, res: ServerResponse): void {
  const d = departureOf(request);
  // on(), not once(): a response closes once, and once() costs a wrapper and a bound function per request.
  res.on('close', () => {
    if (d.closed) return;
    d.closed = true;
    if (!res.writableFinished) {
      d.gone = true;
      d.controller?.abort();
    }
    const run = d.onClose;
    d.onClose = null;
    if (run) for (const fn of run) fn();
  });
}

/**
 * Runs `fn` once when the request's response closes — sent whole or abandoned by the client (ask
 * clientGone() which) — or at once when it already has. For requests the pipeline watches
 * (watchDeparture).
 */
export function whenClosed(request: Departing, fn: () => void): void {
  const d = departureOf(request);
  if (d.closed) fn();
  else (d.onClose ??= []).push(fn);
}

/** true when the client has already left: the caller answers nobody and calls no upstream. */
export function clientGone(request: Departing): boolean {
  // The socket's own state too: its 'close' may not have reached the response's listener yet.
  const socket = request.raw.socket as { destroyed?: boolean; readableEnded?: boolean } | null;
  return (request as Watched)[DEPARTURE]?.gone === true || socket?.destroyed === true || socket?.readableEnded === true;
}

/**
 * Whether the client is still there, asked just before the upstream call. A request can go from
 * its arrival through the credit hold to the upstream call within one turn of the event loop (a
 * SQLite hold completes synchronously), before the loop has read the client's FIN or RST that
 * arrived right behind the request: passing the loop's I/O phase first (setImmediate) lets the
 * departure be seen. Microseconds on an idle loop; under load, the rest of a loop iteration full of
 * other requests' events: the price of making no upstream call for a client that has left.
 */
export function clientStillThere(signal: DepartureSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  // Two turns: called from the loop's check phase, the first already crosses an I/O phase; called
  // from the I/O phase itself, the first only reaches this turn's check phase. One promise for both.
  return new Promise<boolean>((resolve) => {
    setImmediate(() => {
      if (signal.aborted) resolve(false);
      else setImmediate(() => resolve(!signal.aborted));
    });
  });
}

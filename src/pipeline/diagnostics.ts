import { channel } from 'node:diagnostics_channel';
import type { ServerResponse } from 'node:http';
import type { GatewayRequest } from './request.js';

// Every request the pipeline serves is published on two node:diagnostics_channel channels
// (docs/architecture.md, "Request diagnostics"), so tracing and monitoring tools can follow each one
// without the gateway knowing them. Publishing costs nothing while nobody subscribes.

/** Published when a request enters the pipeline: `{ request }`. */
export const REQUEST_START = 'mediagate:request:start';
/** Published when its response closed (sent whole, or the client left): `{ request, statusCode, finished, durationMs }`. */
export const REQUEST_END = 'mediagate:request:end';

const start = channel(REQUEST_START);
const end = channel(REQUEST_END);

export interface RequestStartMessage {
  request: GatewayRequest;
}

export interface RequestEndMessage {
  request: GatewayRequest;
  /** The status sent (0 when nothing was). */
  statusCode: number;
  /** Whether the response was sent whole (false: the client left first, or the connection broke). */
  finished: boolean;
  durationMs: number;
}

export function requestStart(request: GatewayRequest): void {
  if (start.hasSubscribers) start.publish({ request } satisfies RequestStartMessage);
}

export function requestEnd(request: GatewayRequest, res: ServerResponse): void {
  if (!end.hasSubscribers) return;
  end.publish({ request, statusCode: res.headersSent ? res.statusCode : 0, finished: res.writableFinished, durationMs: performance.now() - request.started } satisfies RequestEndMessage);
}

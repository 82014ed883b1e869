import type { FastifyInstance } from 'fastify';
import type { IncomingMessage, ServerOptions } from 'node:http';
import type { Socket } from 'node:net';

// What keeps slow or greedy clients from holding the process's sockets: bounded time to send a
// request, no reading of a body the gateway will not use, and a cap on connections per address.

export interface ConnectionLimits {
  request_timeout_ms: number;
  headers_timeout_ms: number;
  max_connections_per_client: number;
}

/**
 * Fastify/Node server options: a request (headers and body) must arrive within
 * `request_timeout_ms`, its headers within `headers_timeout_ms`; Node then answers 408 and closes.
 * These bound only the request's arrival, never a long answer or stream. Node checks them on an
 * interval, so the interval follows the smaller timeout.
 */
export function serverTimeoutOptions(s: ConnectionLimits): { requestTimeout: number; http: ServerOptions } {
  const headersTimeout = Math.min(s.headers_timeout_ms, s.request_timeout_ms);
  return {
    requestTimeout: s.request_timeout_ms,
    http: { headersTimeout, connectionsCheckingInterval: Math.max(100, Math.min(1000, Math.floor(headersTimeout / 2))) },
  };
}

export function registerConnectionGuards(app: FastifyInstance, s: ConnectionLimits): void {
  // An answer sent before the request's body was read (401, 403, 413, 404 …): reading the rest
  // would let a client keep the socket by trickling bytes, so the connection ends with the answer.
  // A request without a body (no Content-Length above 0, no Transfer-Encoding) has nothing left to
  // read: Node marks it complete only after its 'request' event returns, so one answered at once
  // (a GET whose hooks and handler all run synchronously) must not count as unread, or every such
  // request would cost the client a new connection.
  app.addHook('onSend', (request, reply, payload, done) => {
    if (bodyLeftUnread(request.raw)) reply.header('connection', 'close');
    done(null, payload);
  });

  if (s.max_connections_per_client > 0) {
    const perAddress = new Map<string, number>();
    app.server.on('connection', (socket: Socket) => {
      const address = socket.remoteAddress ?? '';
      const n = (perAddress.get(address) ?? 0) + 1;
      if (n > s.max_connections_per_client) {
        socket.destroy();
        return;
      }
      perAddress.set(address, n);
      socket.once('close', () => {
        const left = (perAddress.get(address) ?? 1) - 1;
        if (left <= 0) perAddress.delete(address);
        else perAddress.set(address, left);
      });
    });
  }
}

/** Whether an answer sent now would leave part of the request's body unread: it declares one (Content-Length above 0, or a Transfer-Encoding) and is not complete. */
export function bodyLeftUnread(raw: IncomingMessage): boolean {
  if (raw.complete) return false;
  const headers = raw.headers;
  if (headers['transfer-encoding'] !== undefined) return true;
  const length = headers['content-length'];
  return length !== undefined && length !== '0';
}

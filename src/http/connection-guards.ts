import type { IncomingMessage, Server } from 'node:http';
import type { Socket } from 'node:net';

// What keeps slow or greedy clients from holding the process's sockets: bounded time to send a
// request, no reading of a body the gateway will not use, and a cap on connections per address.

export interface ConnectionLimits {
  request_timeout_ms: number;
  headers_timeout_ms: number;
  max_connections_per_client: number;
}

/**
 * node:http server options: a request (headers and body) must arrive within `request_timeout_ms`,
 * its headers within `headers_timeout_ms`; Node then answers 408 and closes. These bound only the
 * request's arrival, never a long answer or stream. Node checks them on an interval, so the
 * interval follows the smaller timeout.
 */
export function serverTimeoutOptions(s: ConnectionLimits): { requestTimeout: number; headersTimeout: number; connectionsCheckingInterval: number } {
  const headersTimeout = Math.min(s.headers_timeout_ms, s.request_timeout_ms);
  return { requestTimeout: s.request_timeout_ms, headersTimeout, connectionsCheckingInterval: Math.max(100, Math.min(1000, Math.floor(headersTimeout / 2))) };
}

/**
 * At most `max_connections_per_client` connections from one address (0: no cap). An answer sent
 * before the request's body was read closes its connection (Reply.send, bodyLeftUnread below).
 */
export function capConnectionsPerClient(server: Server, s: ConnectionLimits): void {
  if (s.max_connections_per_client <= 0) return;
  const perAddress = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
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

/**
 * Whether an answer sent now would leave part of the request's body unread: it declares one
 * (Content-Length above 0, or a Transfer-Encoding) and is not complete. Reading the rest would let
 * a client keep the socket by trickling bytes, so such an answer ends the connection. A request
 * without a body has nothing left to read: Node marks it complete only after its 'request' event
 * returns, so one answered at once must not count as unread, or every such request would cost the
 * client a new connection.
 */
export function bodyLeftUnread(raw: IncomingMessage): boolean {
  if (raw.complete) return false;
  const headers = raw.headers;
  if (headers['transfer-encoding'] !== undefined) return true;
  const length = headers['content-length'];
  return length !== undefined && length !== '0';
}

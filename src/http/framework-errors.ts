import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { GatewayError, errorBody, familyHeaders, familyOf } from './errors.js';

// Errors raised before a request reaches a route — by the router (bad percent-encoding, an overlong
// path parameter) or by Node's HTTP parser (malformed request line or headers, oversized headers) —
// answered in the family shape of the request's path like every other error.

/** The router could not route the request: its path is not validly encoded, or a segment is too long. */
export function badPathError(problem: 'bad_url' | 'max_param_length', url: string): GatewayError {
  return problem === 'max_param_length'
    ? new GatewayError(400, familyOf(url) === 'video' ? 'invalid_task_id' : 'invalid_request', 'A path segment of this request is longer than this gateway accepts.')
    : new GatewayError(400, 'invalid_request', 'The request path is not validly encoded.');
}

/** The server's 'clientError' listener: Node could not parse the request, so there is no request object. */
export function renderClientError(err: Error & { code?: string; rawPacket?: unknown }, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  let g: GatewayError;
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') g = new GatewayError(408, 'request_timeout', 'The request was not received in time.');
  else if (err.code === 'HPE_HEADER_OVERFLOW') g = new GatewayError(431, 'request_too_large', 'The request headers are larger than this gateway accepts.');
  else g = new GatewayError(400, 'invalid_request', 'The request is not valid HTTP.');
  const family = familyOf(pathOf(err.rawPacket));
  const body = JSON.stringify(errorBody(family, g));
  const extra = Object.entries(familyHeaders(family)).map(([k, v]) => `${k}: ${v}\r\n`).join('');
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${g.status} ${STATUS_CODES[g.status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}Connection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

/** The path of the request line in the bytes Node failed to parse, if it got that far. */
function pathOf(raw: unknown): string {
  if (!Buffer.isBuffer(raw)) return '/';
  const line = raw.subarray(0, Math.min(raw.length, 2048)).toString('latin1').split('\r\n', 1)[0];
  const target = line.split(' ')[1] ?? '/';
  return target.startsWith('/') ? target : '/';
}

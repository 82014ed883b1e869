import { connect } from 'node:net';

export interface RawResponse {
  /** 0 when the server closed the connection without an answer (or the deadline passed). */
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Everything the server sent, for "no key anywhere in the answer" checks. */
  raw: Buffer;
}

/**
 * Sends bytes exactly as given over a fresh TCP connection and reads until the server closes it:
 * fetch() would normalize `..`, reject odd header bytes and fix lengths, which is the point here.
 */
export function rawRequest(port: number, request: Buffer | string, deadlineMs = 15_000): Promise<RawResponse> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const socket = connect(port, '127.0.0.1');
    const finish = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(parseResponse(Buffer.concat(chunks)));
    };
    const timer = setTimeout(finish, deadlineMs);
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('end', finish);
    socket.on('close', finish);
    // The server may answer and close before the whole request was written (413, 431).
    socket.on('error', () => undefined);
    socket.write(request);
  });
}

export function parseResponse(raw: Buffer): RawResponse {
  const text = raw.toString('latin1');
  const headEnd = text.indexOf('\r\n\r\n');
  if (!text.startsWith('HTTP/1.1 ') || headEnd < 0) return { status: 0, headers: {}, body: '', raw };
  const [statusLine, ...lines] = text.slice(0, headEnd).split('\r\n');
  const headers: Record<string, string> = {};
  for (const l of lines) {
    const i = l.indexOf(':');
    if (i > 0) headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
  }
  let body = raw.subarray(Buffer.byteLength(text.slice(0, headEnd + 4), 'latin1'));
  if (/chunked/i.test(headers['transfer-encoding'] ?? '')) body = dechunk(body);
  else if (headers['content-length'] !== undefined) body = body.subarray(0, Number(headers['content-length']));
  return { status: Number(statusLine.split(' ')[1]), headers, body: body.toString('utf8'), raw };
}

function dechunk(buf: Buffer): Buffer {
  const out: Buffer[] = [];
  let at = 0;
  while (at < buf.length) {
    const lineEnd = buf.indexOf('\r\n', at);
    if (lineEnd < 0) break;
    const size = parseInt(buf.subarray(at, lineEnd).toString('latin1'), 16);
    if (!size) break;
    out.push(buf.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
  return Buffer.concat(out);
}

/** An HTTP/1.1 request as bytes; `body` is sent as is, with a correct Content-Length unless headers say otherwise. */
export function buildRequest(method: string, target: string, headers: Array<[string, string | Buffer]>, body?: Buffer | string): Buffer {
  const parts: Buffer[] = [Buffer.from(`${method} ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n`, 'latin1')];
  const hasLength = headers.some(([k]) => /^(content-length|transfer-encoding)$/i.test(k));
  for (const [k, v] of headers) parts.push(Buffer.from(`${k}: `, 'latin1'), Buffer.isBuffer(v) ? v : Buffer.from(v, 'latin1'), Buffer.from('\r\n'));
  const b = body === undefined ? undefined : Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8');
  if (b && !hasLength) parts.push(Buffer.from(`Content-Length: ${b.length}\r\n`));
  parts.push(Buffer.from('\r\n'));
  if (b) parts.push(b);
  return Buffer.concat(parts);
}

import { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { parseRange } from '../../http/byte-range.js';

// A video a provider answers inline (base64 in the task object): kept out of the stored task, and
// served as a download answer (Range included) when the task is read again for it.

/** The task with the base64 string at `path` replaced by a short note of its size. */
export function withoutInline(task: Record<string, unknown>, path: string): Record<string, unknown> {
  const keys = path.split('.');
  const swap = (node: unknown, i: number): unknown => {
    if (i === keys.length) return typeof node === 'string' && node ? `(${Math.floor((node.length * 3) / 4)} bytes, omitted; served by the gateway's /content)` : node;
    if (Array.isArray(node)) {
      const k = Number(keys[i]);
      return Number.isInteger(k) && k < node.length ? node.map((x, j) => (j === k ? swap(x, i + 1) : x)) : node;
    }
    if (!node || typeof node !== 'object' || !Object.hasOwn(node, keys[i])) return node;
    return { ...(node as Record<string, unknown>), [keys[i]]: swap((node as Record<string, unknown>)[keys[i]], i + 1) };
  };
  return swap(task, 0) as Record<string, unknown>;
}

/** Bytes held in memory as an upstream answer: 200, or 206 / 416 for a Range. */
export function bufferResponse(bytes: Buffer, contentType: string, range?: string): Dispatcher.ResponseData {
  const r = parseRange(range, bytes.length);
  const headers: Record<string, string> = { 'content-type': contentType, 'accept-ranges': 'bytes' };
  let status = 200;
  let body = bytes;
  if (r === 'unsatisfiable') {
    [status, body] = [416, Buffer.alloc(0)];
    headers['content-range'] = `bytes */${bytes.length}`;
  } else if (r) {
    [status, body] = [206, bytes.subarray(r.start, r.end + 1)];
    headers['content-range'] = `bytes ${r.start}-${r.end}/${bytes.length}`;
  }
  headers['content-length'] = String(body.length);
  return { statusCode: status, headers, body: Readable.from([body]), trailers: {}, opaque: null, context: {} } as unknown as Dispatcher.ResponseData;
}

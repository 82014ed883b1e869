import { redact } from '../http/redact.js';

// A body as a request log stores it: secrets scrubbed as in error answers, images as references
// ("[image N bytes]" for base64 and data URLs; stored-image URLs and task ids stay as they are),
// then cut at the configured size.

const BASE64 = /^[A-Za-z0-9+/=\r\n_-]+$/;
/** A string this long made only of base64 characters is a file, not text. */
const BLOB_MIN = 512;

function isBlob(key: string, value: string): boolean {
  if (value.startsWith('data:')) return true;
  if (key === 'b64_json' || key === 'bytesBase64Encoded' || key === 'base64') return value.length > 0;
  return value.length >= BLOB_MIN && BASE64.test(value);
}

function blobBytes(value: string): number {
  const comma = value.startsWith('data:') ? value.indexOf(',') + 1 : 0;
  return Math.floor(((value.length - comma) * 3) / 4);
}

function references(value: unknown, key = ''): unknown {
  if (typeof value === 'string') return isBlob(key, value) ? `[image ${blobBytes(value)} bytes]` : value;
  if (Array.isArray(value)) return value.map((v) => references(v, key));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = references(v, k);
    return out;
  }
  return value;
}

/** Cuts `text` to at most `max` bytes of UTF-8, saying how much was left out. */
export function truncate(text: string, max: number): string {
  const bytes = Buffer.byteLength(text);
  if (bytes <= max) return text;
  let cut = Buffer.from(text).subarray(0, max).toString('utf8');
  // A character split at the cut decodes as U+FFFD: drop it.
  if (cut.endsWith('\uFFFD')) cut = cut.slice(0, -1);
  return `${cut}…[truncated ${bytes - Buffer.byteLength(cut)} bytes]`;
}

/** A request or response body (parsed JSON, JSON text, other text, bytes) as stored. */
export function storedBody(body: unknown, max: number): string {
  if (body === undefined || body === null || body === '') return '';
  if (Buffer.isBuffer(body)) {
    const text = body.toString('utf8');
    return text.startsWith('{') || text.startsWith('[') ? storedBody(text, max) : `[binary ${body.length} bytes]`;
  }
  let value: unknown = body;
  if (typeof body === 'string') {
    try {
      value = JSON.parse(body);
    } catch {
      return truncate(redact(body), max);
    }
  }
  return truncate(redact(JSON.stringify(references(value))), max);
}

import { createReadStream } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';

// A multipart/form-data body for an upstream call: text fields, then files streamed from disk or
// sent from memory. Only the part headers are built up front, so the length is known and the
// upstream gets a Content-Length rather than chunked encoding.

export interface FormFile {
  name: string;
  filename: string;
  contentType: string;
  /** The file on disk (with its size), or its bytes. */
  path?: string;
  size?: number;
  bytes?: Buffer;
}

/** A header value safe inside a quoted Content-Disposition parameter. */
function quoted(value: string): string {
  return value.replace(/[\r\n"\\]/g, '_');
}

export function multipartBody(fields: Record<string, unknown>, files: FormFile[]): { stream: Readable; length: number; contentType: string } {
  const boundary = `mediagate-${randomBytes(12).toString('hex')}`;
  const heads: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) {
    if (value === undefined || value === null) continue;
    const text = typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value);
    heads.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${quoted(name)}"\r\n\r\n${text}\r\n`));
  }
  const fileHeads = files.map((f) => Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${quoted(f.name)}"; filename="${quoted(f.filename)}"\r\nContent-Type: ${f.contentType}\r\n\r\n`));
  const crlf = Buffer.from('\r\n');
  const tail = Buffer.from(`--${boundary}--\r\n`);
  const sizeOf = (f: FormFile) => f.bytes?.length ?? f.size ?? 0;
  const length = heads.reduce((s, b) => s + b.length, 0) + fileHeads.reduce((s, b) => s + b.length, 0) + files.reduce((s, f) => s + sizeOf(f) + crlf.length, 0) + tail.length;
  async function* chunks(): AsyncGenerator<Buffer> {
    for (const h of heads) yield h;
    for (let i = 0; i < files.length; i++) {
      yield fileHeads[i];
      const f = files[i];
      if (f.bytes) yield f.bytes;
      else for await (const c of createReadStream(f.path!)) yield c as Buffer;
      yield crlf;
    }
    yield tail;
  }
  return { stream: Readable.from(chunks(), { objectMode: false }), length, contentType: `multipart/form-data; boundary=${boundary}` };
}

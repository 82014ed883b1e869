// A small multipart/form-data parser for the simulator, which already holds each request body in
// memory. It is strict about the framing the official SDKs produce and answers null for anything else.

export interface FormPart {
  name: string;
  /** Present for file parts. */
  filename?: string;
  contentType?: string;
  data: Buffer;
}

export function boundaryOf(contentType: string | undefined): string | null {
  if (!contentType || !/^multipart\/form-data\b/i.test(contentType)) return null;
  const m = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  return m ? (m[1] ?? m[2]) : null;
}

/** Splits a multipart body into its parts; null when the body is not well-formed. */
export function parseMultipart(body: Buffer, boundary: string): FormPart[] | null {
  const delimiter = Buffer.from(`--${boundary}`);
  const parts: FormPart[] = [];
  let pos = body.indexOf(delimiter);
  if (pos < 0) return null;
  for (;;) {
    pos += delimiter.length;
    // "--" right after a delimiter closes the body.
    if (body[pos] === 0x2d && body[pos + 1] === 0x2d) return parts;
    if (body[pos] !== 0x0d || body[pos + 1] !== 0x0a) return null;
    pos += 2;
    const headerEnd = body.indexOf('\r\n\r\n', pos);
    if (headerEnd < 0) return null;
    const headers = body.subarray(pos, headerEnd).toString('utf8').split('\r\n');
    const next = body.indexOf(Buffer.concat([Buffer.from('\r\n'), delimiter]), headerEnd + 4);
    if (next < 0) return null;
    const part = partFromHeaders(headers);
    if (!part) return null;
    parts.push({ ...part, data: body.subarray(headerEnd + 4, next) });
    pos = next + 2;
  }
}

function partFromHeaders(lines: string[]): Omit<FormPart, 'data'> | null {
  let name: string | undefined;
  let filename: string | undefined;
  let contentType: string | undefined;
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const key = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (key === 'content-disposition') {
      name = /\bname="([^"]*)"/i.exec(value)?.[1];
      filename = /\bfilename="([^"]*)"/i.exec(value)?.[1];
    } else if (key === 'content-type') {
      contentType = value;
    }
  }
  if (name === undefined) return null;
  return { name, filename, contentType };
}

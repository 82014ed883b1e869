import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { Busboy } from '@fastify/busboy';
import sjson from 'secure-json-parse';

// A multipart/form-data body read part by part (POST /v1/images/edits, POST /v1/videos): busboy
// parses the request stream; each text field and each file comes out in the order sent, a file as
// a stream its reader must consume before asking for the next part (busboy waits on it, so a large
// file never sits in memory).

export interface MultipartLimits {
  fileSize?: number;
  files?: number;
  fields?: number;
  fieldSize?: number;
  fieldNameSize?: number;
  parts?: number;
  headerPairs?: number;
}

export type FormPart =
  | { type: 'field'; fieldname: string; value: unknown; mimetype: string; fieldnameTruncated: boolean; valueTruncated: boolean }
  | { type: 'file'; fieldname: string; filename: string; mimetype: string; file: Readable };

/** A form refused while it was read: `code` says which limit or rule (mapped to answers in routes/image-upload.ts). */
export class FormError extends Error {
  constructor(
    readonly code: 'too_many_files' | 'too_many_parts' | 'too_many_fields' | 'reserved_name' | 'invalid_json_field' | 'incomplete',
    message: string,
  ) {
    super(message);
  }
}

/**
 * Yields the form's parts in order; throws a FormError or busboy's framing error on the first bad one.
 * `buffered`: the body already read whole (a request with an Idempotency-Key), parsed from memory.
 */
export async function* formParts(raw: IncomingMessage, limits: MultipartLimits, buffered: Buffer | null = null): AsyncGenerator<FormPart> {
  const queue: (FormPart | Error | null)[] = [];
  let wake: (() => void) | null = null;
  const push = (v: FormPart | Error | null) => {
    queue.push(v);
    const w = wake;
    wake = null;
    w?.();
  };
  const bb = new Busboy({ headers: raw.headers as { 'content-type': string }, limits });
  bb.on('field', (fieldname: string, value: string, fieldnameTruncated: boolean, valueTruncated: boolean, _encoding: string, mimetype: string) => {
    if (fieldname in Object.prototype) return push(new FormError('reserved_name', 'A field name is not allowed.'));
    let parsed: unknown = value;
    if (mimetype.startsWith('application/json')) {
      try {
        if (valueTruncated) throw new Error('truncated');
        parsed = sjson.parse(value);
      } catch {
        return push(new FormError('invalid_json_field', 'A field declared as JSON is not valid JSON.'));
      }
    }
    push({ type: 'field', fieldname, value: parsed, mimetype, fieldnameTruncated, valueTruncated });
  });
  bb.on('file', (fieldname: string, file: Readable, filename: string, _encoding: string, mimetype: string) => {
    if (fieldname in Object.prototype) {
      file.resume();
      return push(new FormError('reserved_name', 'A field name is not allowed.'));
    }
    // Busboy stops a file at its fileSize limit (file.truncated): routes set it one byte above
    // their own per-file check, so the route's check refuses the file with its own message first.
    push({ type: 'file', fieldname, filename, mimetype, file });
  });
  bb.on('partsLimit', () => push(new FormError('too_many_parts', 'Too many fields in the request.')));
  bb.on('filesLimit', () => push(new FormError('too_many_files', 'Too many files in the request.')));
  bb.on('fieldsLimit', () => push(new FormError('too_many_fields', 'Too many fields in the request.')));
  bb.on('finish', () => push(null));
  bb.on('error', (err: Error) => push(err));
  const onClose = () => {
    if (!raw.complete) push(new FormError('incomplete', 'The client closed the request before the form was complete.'));
  };
  const source: Readable = buffered ? Readable.from([buffered]) : raw;
  if (!buffered) raw.on('close', onClose);
  source.pipe(bb);
  try {
    for (;;) {
      if (!queue.length) await new Promise<void>((resolve) => (wake = resolve));
      const next = queue.shift()!;
      if (next === null) return;
      if (next instanceof Error) {
        // Busboy's way of saying the body ended early; the form ends there, as far as it came.
        if (next.message === 'Unexpected end of multipart data') return;
        throw next;
      }
      yield next;
    }
  } finally {
    raw.removeListener('close', onClose);
    source.unpipe(bb);
  }
}

import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { GatewayRequest } from '../pipeline/request.js';
import { FormError } from '../pipeline/multipart.js';
import { GatewayError, errors } from '../http/errors.js';
import { SNIFF_BYTES, sniffImageType } from '../http/image-type.js';
import type { UploadedImage } from '../providers/image-types.js';

// Reads a POST /v1/images/edits form part by part. Files are checked by their first bytes and
// spooled to a private temp folder as they arrive, so memory holds one chunk at a time whatever
// the size; every limit is enforced while reading, before the next part is looked at.

export interface UploadLimits {
  maxFiles: number;
  maxFileBytes: number;
  maxTotalBytes: number;
}

/** Longest text field (the prompt is at most 32,000 characters, up to 4 bytes each). */
export const MAX_FIELD_BYTES = 128 * 1024;
const MAX_FIELDS = 64;

/** Busboy's own limits, one step above ours, so the gateway's checks fire first with clear messages. */
export function busboyLimits(l: UploadLimits) {
  return {
    fileSize: l.maxFileBytes + 1,
    files: l.maxFiles + 2,
    fields: MAX_FIELDS,
    fieldSize: MAX_FIELD_BYTES,
    fieldNameSize: 200,
    parts: l.maxFiles + MAX_FIELDS + 2,
    headerPairs: 100,
  };
}

const IMAGE_FIELD = /^image(\[\d*\])?$/;

const tooLarge = (message: string) => new GatewayError(413, 'request_too_large', message);

/** Counts the bytes of one file, rejects it as soon as it is over a limit or is not an image. */
class FileGuard extends Transform {
  bytes = 0;
  type: UploadedImage['type'] | null = null;
  private head: Buffer[] = [];
  private headBytes = 0;

  constructor(
    private readonly field: string,
    private readonly maxFileBytes: number,
    private readonly roomLeft: () => number,
    private readonly pngOnly: boolean,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.maxFileBytes) return cb(tooLarge(`The file in \`${this.field}\` is larger than ${mb(this.maxFileBytes)}.`));
    if (this.bytes > this.roomLeft()) return cb(tooLarge('The uploaded files together are larger than this gateway accepts.'));
    if (this.type === null && this.headBytes < SNIFF_BYTES) {
      this.head.push(chunk);
      this.headBytes += chunk.length;
      if (this.headBytes >= SNIFF_BYTES) {
        const err = this.decide();
        if (err) return cb(err);
      }
    }
    cb(null, chunk);
  }

  override _flush(cb: TransformCallback): void {
    cb(this.type === null ? this.decide() : null);
  }

  private decide(): GatewayError | null {
    this.type = sniffImageType(Buffer.concat(this.head));
    this.head = [];
    if (!this.type) return errors.invalidRequest(`The file in \`${this.field}\` is not a PNG, JPEG or WEBP image.`, this.field);
    if (this.pngOnly && this.type !== 'png') return errors.invalidRequest('The `mask` must be a PNG image.', 'mask');
    return null;
  }
}

function mb(bytes: number): string {
  return `${Math.round((bytes / (1024 * 1024)) * 100) / 100} MB`;
}

/** What a read form holds: text fields by name, images in order, the mask. `cleanup()` removes the files. */
export class ImageUpload {
  readonly fields: Record<string, string> = {};
  readonly images: UploadedImage[] = [];
  mask: UploadedImage | undefined;
  private dir: string | null = null;
  private total = 0;
  private seq = 0;

  constructor(private readonly limits: UploadLimits) {}

  /**
   * Reads every part; `onField` sees each text field as soon as it arrives (so an unknown model
   * is refused before any large file is read). Throws a GatewayError on the first bad part.
   */
  async read(request: GatewayRequest, onField: (name: string, value: string) => Promise<void> | void): Promise<void> {
    try {
      for await (const part of request.parts()) {
        if (part.type === 'field') {
          if (part.fieldnameTruncated || part.valueTruncated) throw tooLarge(`The field \`${part.fieldname}\` is longer than ${MAX_FIELD_BYTES} bytes.`);
          if (IMAGE_FIELD.test(part.fieldname) || part.fieldname === 'mask') {
            throw errors.invalidRequest(`\`${part.fieldname}\` must be an uploaded file, not a text field.`, part.fieldname);
          }
          const value = typeof part.value === 'string' ? part.value : JSON.stringify(part.value);
          this.total += Buffer.byteLength(value);
          if (this.total > this.limits.maxTotalBytes) throw tooLarge('The request is larger than this gateway accepts.');
          this.fields[part.fieldname] = value;
          await onField(part.fieldname, value);
          continue;
        }
        const isMask = part.fieldname === 'mask';
        if (!isMask && !IMAGE_FIELD.test(part.fieldname)) {
          throw errors.invalidRequest(`Unexpected file field \`${part.fieldname}\`: send images as \`image\` (or \`image[]\`) and an optional \`mask\`.`, part.fieldname);
        }
        if (isMask && this.mask) throw errors.invalidRequest('Only one `mask` file may be sent.', 'mask');
        if (!isMask && this.images.length >= this.limits.maxFiles) {
          throw errors.invalidRequest(`Too many image files: at most ${this.limits.maxFiles} per request.`, 'image');
        }
        const saved = await this.spool(part.file, part.fieldname, isMask);
        if (isMask) this.mask = saved;
        else this.images.push(saved);
      }
    } catch (err) {
      throw multipartError(err);
    }
  }

  private async spool(file: NodeJS.ReadableStream, field: string, isMask: boolean): Promise<UploadedImage> {
    this.dir ??= await mkdtemp(join(tmpdir(), 'mediagate-upload-'));
    const path = join(this.dir, `${++this.seq}.bin`);
    const guard = new FileGuard(field, this.limits.maxFileBytes, () => this.limits.maxTotalBytes - this.total, isMask);
    await pipeline(file, guard, createWriteStream(path));
    this.total += guard.bytes;
    return { path, size: guard.bytes, type: guard.type! };
  }

  async cleanup(): Promise<void> {
    const dir = this.dir;
    this.dir = null;
    if (dir) await rm(dir, { recursive: true, force: true }).catch(() => undefined);
  }
}

/** Maps the form reader's and busboy's own errors to the gateway's status table. */
export function multipartError(err: unknown): unknown {
  if (err instanceof GatewayError) return err;
  if (err instanceof FormError) return errors.invalidRequest(err.message, err.code === 'too_many_files' ? 'image' : undefined);
  const e = err as { code?: string; message?: string };
  // A failing temp folder (full disk, permissions) is the gateway's fault, not the client's.
  if (typeof e?.code === 'string' && /^E[A-Z]+$/.test(e.code)) {
    return new GatewayError(503, 'upload_storage_unavailable', 'The gateway cannot store the uploaded files right now; retry later.');
  }
  // Busboy's framing errors ("Unexpected end of form", "Malformed part header", missing boundary, …).
  return errors.invalidRequest(`The multipart/form-data body is malformed${e?.message ? `: ${e.message}` : ''}.`);
}

/**
 * After a refusal part-way through the body, reads and discards the rest so the client can
 * finish sending and read the answer; gives up (closes the connection) past `capBytes`.
 */
export function discardRest(request: GatewayRequest, capBytes: number): void {
  const raw = request.raw;
  if (raw.readableEnded || raw.destroyed) return;
  raw.unpipe();
  let drained = 0;
  raw.on('data', (c: Buffer) => {
    drained += c.length;
    if (drained > capBytes) raw.socket?.destroy();
  });
  raw.resume();
}

import type { GatewayRequest } from '../pipeline/request.js';
import { GatewayError, errors } from '../http/errors.js';
import { MIME, sniffImageType } from '../http/image-type.js';
import { fieldTooDeep, readJsonField } from '../http/json-field.js';
import { MAX_JSON_DEPTH } from '../http/request-guards.js';
import { multipartError } from './image-upload.js';

// POST /v1/videos as the openai SDK sends it: multipart/form-data, nested objects as bracketed
// names (`input_reference[image_url]`, `metadata[negative_prompt]`), and `input_reference` as an
// uploaded image. The form is read into the object a JSON body would be; the image becomes a
// data: URL, which every video provider takes as a first frame. The object built is held to the
// limits of the JSON body it stands for: at most MAX_JSON_DEPTH levels, no prototype keys.

const NAME = /^([A-Za-z_][A-Za-z0-9_]*)((?:\[[A-Za-z0-9_.-]*\])*)$/;
const FORBIDDEN = new Set(['__proto__', 'constructor', 'prototype']);
/** Fields whose value is one uploaded file. */
const FILE_FIELD = 'input_reference';

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);
const tooDeep = (field: string) => fieldTooDeep(field, ' (counting the request as one JSON body)');

/** A form value under metadata: numbers and booleans as such (a form has only text), the rest as text. */
function metadataValue(v: string): unknown {
  if (v === 'true' || v === 'false') return v === 'true';
  if (/^-?\d+(\.\d+)?$/.test(v) && v.length < 16) return Number(v);
  return v;
}

/** Puts `value` at the bracketed path of `name` (`a[b][]`) inside `out`. */
function place(out: Record<string, unknown>, name: string, value: unknown): void {
  const m = NAME.exec(name);
  const path = m ? [m[1], ...[...m[2].matchAll(/\[([^\]]*)\]/g)].map((x) => x[1])] : null;
  if (!path || path.some((k) => FORBIDDEN.has(k))) throw errors.invalidRequest(`The form field name "${name.slice(0, 100)}" is not allowed.`);
  // `a[b][c]` holding text makes the form (level 1) three levels deep: one per name in the path.
  if (path.length > MAX_JSON_DEPTH) throw tooDeep(path[0]);
  if (path[0] === 'metadata' && path.length > 1 && typeof value === 'string') value = metadataValue(value);
  let at: Record<string, unknown> | unknown[] = out;
  for (let i = 0; i < path.length; i++) {
    const key = path[i];
    const last = i === path.length - 1;
    if (Array.isArray(at)) {
      if (key !== '') throw errors.invalidRequest(`The form field "${name}" mixes a list and named fields.`, path[0]);
      if (last) {
        at.push(value);
      } else {
        const item: Record<string, unknown> = {};
        at.push(item);
        at = item;
      }
      continue;
    }
    if (last) {
      if (key === '') throw errors.invalidRequest(`The form field "${name}" has an empty name.`, path[0]);
      if (at[key] !== undefined) throw errors.invalidRequest(`The form field "${name}" is given twice.`, path[0]);
      at[key] = value;
      continue;
    }
    const next = path[i + 1] === '' ? [] : {};
    const existing = at[key];
    if (existing === undefined) at[key] = next;
    else if (Array.isArray(existing) !== Array.isArray(next) || (!Array.isArray(existing) && !isObject(existing))) throw errors.invalidRequest(`The form field "${name}" conflicts with another field.`, path[0]);
    at = at[key] as Record<string, unknown> | unknown[];
  }
}

async function readImage(file: NodeJS.ReadableStream, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of file as AsyncIterable<Buffer>) {
    bytes += chunk.length;
    if (bytes > maxBytes) throw new GatewayError(413, 'request_too_large', `The input_reference file is larger than ${Math.round(maxBytes / 1024 / 1024)} MB.`);
    chunks.push(chunk);
  }
  const data = Buffer.concat(chunks);
  const type = sniffImageType(data.subarray(0, 16));
  if (!type) throw errors.invalidRequest('The input_reference file is not a PNG, JPEG or WEBP image.', 'input_reference');
  return `data:${MIME[type]};base64,${data.toString('base64')}`;
}

/**
 * Reads the form into a body object. `onModel` sees the model as soon as its field arrives, so an
 * unknown model or an exhausted rate limit is refused before a large file is read.
 */
export async function readVideoForm(request: GatewayRequest, maxFileBytes: number, onModel: (model: string) => Promise<void>): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  try {
    for await (const part of request.parts()) {
      if (part.type === 'file') {
        if (part.fieldname !== FILE_FIELD) throw errors.invalidRequest(`Unexpected file field "${part.fieldname}": only input_reference may be a file (an image).`, part.fieldname);
        if (out[FILE_FIELD] !== undefined) throw errors.invalidRequest('Only one input_reference may be sent.', FILE_FIELD);
        out[FILE_FIELD] = { image_url: await readImage(part.file, maxFileBytes) };
        continue;
      }
      if (part.fieldnameTruncated || part.valueTruncated) throw new GatewayError(413, 'request_too_large', `The field "${part.fieldname}" is too long.`);
      const value = typeof part.value === 'string' ? part.value : String(part.value);
      if (part.fieldname === 'metadata') {
        // A JSON text field keeps exact types. It sits one level below the form.
        const parsed = readJsonField(value, MAX_JSON_DEPTH - 1);
        if (!parsed.ok && parsed.problem === 'too_deep') throw tooDeep('metadata');
        if (!parsed.ok) throw errors.invalidRequest('metadata sent as one form field must be a JSON object.', 'metadata');
        place(out, 'metadata', parsed.value);
        continue;
      }
      place(out, part.fieldname, value);
      if (part.fieldname === 'model' && value) await onModel(value);
    }
  } catch (err) {
    throw multipartError(err);
  }
  return out;
}

import { errors } from '../http/errors.js';
import type { ImageParams } from '../providers/image-types.js';

// Validation of the OpenAI Images parameters shared by generations (a JSON body: typed values) and
// edits (multipart fields: every value is text). Each bad value is a 400 naming its parameter.

export const MAX_PROMPT_CHARS = 32_000;
const QUALITIES = new Set(['auto', 'standard', 'hd', 'low', 'medium', 'high']);
// OpenAI sizes are WIDTHxHEIGHT or auto; Seedream also takes 1K/2K/4K.
const SIZE = /^(auto|\d{1,5}x\d{1,5}|[1-9]K)$/;

export interface ParsedImageRequest {
  model: string;
  params: ImageParams;
}

type Source = 'json' | 'form';

function str(value: unknown, name: string, source: Source): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw errors.invalidRequest(`\`${name}\` must be a string${source === 'form' ? ' field' : ''}.`, name);
  return value;
}

function count(value: unknown, maxN: number, source: Source): number | undefined {
  if (value === undefined || value === null) return undefined;
  let n: unknown = value;
  // A multipart field is text; JSON must carry a real number (as OpenAI's API requires).
  if (source === 'form' && typeof value === 'string' && /^\d{1,4}$/.test(value.trim())) n = Number(value.trim());
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > maxN) {
    throw errors.invalidRequest(`\`n\` must be an integer from 1 to ${maxN}.`, 'n');
  }
  return n;
}

function parse(fields: Record<string, unknown>, maxN: number, source: Source): ParsedImageRequest {
  const { model, prompt, n, size, quality, response_format, user, stream, ...extra } = fields;
  const modelId = str(model, 'model', source);
  if (!modelId) throw errors.invalidRequest('`model` is required: name one of the image models of GET /v1/models.', 'model');
  const text = str(prompt, 'prompt', source);
  if (text === undefined || !text.trim()) throw errors.invalidRequest('`prompt` is required: describe the image to produce.', 'prompt');
  if (text.length > MAX_PROMPT_CHARS) throw errors.invalidRequest(`\`prompt\` is longer than ${MAX_PROMPT_CHARS} characters.`, 'prompt');
  if (stream === true || stream === 'true') throw errors.invalidRequest('Streaming image responses are not supported by this gateway; leave `stream` unset or false.', 'stream');
  if (stream !== undefined && stream !== null && stream !== false && stream !== 'false') throw errors.invalidRequest('`stream` must be a boolean.', 'stream');
  const params: ImageParams = { prompt: text, extra };
  const nn = count(n, maxN, source);
  if (nn !== undefined) params.n = nn;
  const s = str(size, 'size', source);
  if (s !== undefined) {
    if (!SIZE.test(s)) throw errors.invalidRequest('`size` must be WIDTHxHEIGHT (e.g. 1024x1024), auto, or 1K/2K/4K.', 'size');
    params.size = s;
  }
  const q = str(quality, 'quality', source);
  if (q !== undefined) {
    if (!QUALITIES.has(q)) throw errors.invalidRequest(`\`quality\` must be one of ${[...QUALITIES].join(', ')}.`, 'quality');
    params.quality = q;
  }
  const f = str(response_format, 'response_format', source);
  if (f !== undefined) {
    if (f !== 'url' && f !== 'b64_json') throw errors.invalidRequest('`response_format` must be url or b64_json.', 'response_format');
    params.response_format = f;
  }
  const u = str(user, 'user', source);
  if (u !== undefined) params.user = u;
  return { model: modelId, params };
}

/** POST /v1/images/generations body. */
export function parseGenerationBody(body: unknown, maxN: number): ParsedImageRequest {
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw errors.invalidRequest('The request body must be a JSON object.');
  return parse(body as Record<string, unknown>, maxN, 'json');
}

/** The text fields of a POST /v1/images/edits form. */
export function parseEditFields(fields: Record<string, string>, maxN: number): ParsedImageRequest {
  return parse(fields, maxN, 'form');
}

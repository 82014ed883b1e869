import type { Dispatcher } from 'undici';
import { MIME } from '../../http/image-type.js';
import type { Target } from '../../upstream/target.js';
import { UpstreamFailure } from '../../upstream/failure.js';
import { readJsonBody } from '../../upstream/json.js';
import type { EditInput, ImageDatum, ImageParams, ImagesAdapter, ImagesCall, ImagesResult, UploadedImage } from '../image-types.js';
import { multipartBody, type FormFile } from '../multipart-body.js';
import { openaiFailure, openaiHeaders, openaiUrl } from './api.js';

// OpenAI Images: POST {base_url}/images/generations (JSON) and POST {base_url}/images/edits
// (multipart/form-data). Requests are already in OpenAI's terms, so only the model is replaced;
// every other field the client sent goes through unchanged.

const TOP_LEVEL = ['background', 'output_format', 'quality', 'size'] as const;

function knownFields(target: Target, p: ImageParams): Record<string, unknown> {
  const out: Record<string, unknown> = { ...p.extra, model: target.upstreamModel, prompt: p.prompt };
  if (p.n !== undefined) out.n = p.n;
  if (p.size !== undefined) out.size = p.size;
  if (p.quality !== undefined) out.quality = p.quality;
  if (p.response_format !== undefined) out.response_format = p.response_format;
  if (p.user !== undefined) out.user = p.user;
  return out;
}

/** Reads an OpenAI ImagesResponse; anything without a `data` array is a malformed answer. */
export async function readImagesResponse(res: Dispatcher.ResponseData, signal?: AbortSignal): Promise<ImagesResult> {
  if (res.statusCode < 200 || res.statusCode >= 300) throw await openaiFailure(res);
  const body = (await readJsonBody(res, signal)) as Record<string, unknown> | null;
  if (!body || typeof body !== 'object' || !Array.isArray(body.data)) {
    throw new UpstreamFailure('malformed', 'the upstream images answer has no data array', res.statusCode);
  }
  const data: ImageDatum[] = [];
  for (const item of body.data as unknown[]) {
    const d = (item ?? {}) as Record<string, unknown>;
    const out: ImageDatum = {};
    if (typeof d.url === 'string') out.url = d.url;
    if (typeof d.b64_json === 'string') out.b64_json = d.b64_json;
    if (typeof d.revised_prompt === 'string') out.revised_prompt = d.revised_prompt;
    if (out.url === undefined && out.b64_json === undefined) continue; // not an image: nothing to return or bill
    data.push(out);
  }
  const extra: Record<string, unknown> = {};
  for (const k of TOP_LEVEL) if (body[k] !== undefined) extra[k] = body[k];
  return {
    created: typeof body.created === 'number' ? body.created : Math.floor(Date.now() / 1000),
    data,
    ...(body.usage !== undefined ? { usage: body.usage } : {}),
    extra,
  };
}

async function generate(call: ImagesCall, target: Target, params: ImageParams): Promise<ImagesResult> {
  const res = await call.upstream.send({
    url: openaiUrl(target, '/images/generations'),
    method: 'POST',
    headers: openaiHeaders(target),
    body: JSON.stringify(knownFields(target, params)),
    signal: call.signal,
  });
  return readImagesResponse(res, call.signal);
}

async function edit(call: ImagesCall, target: Target, input: EditInput): Promise<ImagesResult> {
  // One image goes as `image`, several as `image[]`, the way OpenAI's own SDK sends them.
  const imageField = input.images.length === 1 ? 'image' : 'image[]';
  const file = (name: string, image: UploadedImage, filename: string): FormFile => ({ name, filename, contentType: MIME[image.type], path: image.path, size: image.size });
  const files = input.images.map((image, i) => file(imageField, image, `image-${i + 1}.${image.type}`));
  if (input.mask) files.push(file('mask', input.mask, `mask.${input.mask.type}`));
  const body = multipartBody(knownFields(target, input), files);
  const headers = openaiHeaders(target, body.contentType);
  headers['content-length'] = String(body.length);
  const res = await call.upstream.send({ url: openaiUrl(target, '/images/edits'), method: 'POST', headers, body: body.stream, signal: call.signal });
  return readImagesResponse(res, call.signal);
}

export const openaiImages: ImagesAdapter = { generate, edit };

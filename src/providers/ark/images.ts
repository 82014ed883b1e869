import { readFile } from 'node:fs/promises';
import { GatewayError } from '../../http/errors.js';
import { fieldTooDeep, readJsonField } from '../../http/json-field.js';
import type { Target } from '../../upstream/target.js';
import { UpstreamFailure } from '../../upstream/failure.js';
import { readJsonBody } from '../../upstream/json.js';
import type { EditInput, ImageDatum, ImageParams, ImagesAdapter, ImagesCall, ImagesResult } from '../image-types.js';
import { arkFailure, arkHeaders, arkUrl } from './api.js';

// Volcengine Ark Seedream: POST {base_url}/api/v3/images/generations. The OpenAI request is
// mapped to Ark's names (docs/images.md has the table):
//   prompt, size ("WxH" as is; "auto" left out), response_format → same names
//   n = 1 → one call with sequential_image_generation "disabled"
//   n > 1 → n concurrent calls, unless the client asked for sequential_image_generation "auto":
//           then one call with sequential_image_generation_options.max_images = n
//   watermark → false unless the client sent it (Ark's default is true; OpenAI clients expect none)
//   seed, guidance_scale, optimize_prompt_options, watermark → passed through when sent
//   quality, user and OpenAI-only fields → dropped (Seedream has no equivalent)
// Edits become image-to-image generations: each uploaded file is sent inline as a
// data:image/<type>;base64 URL in `image`. Seedream has no mask, so a mask is refused.

const PASS_THROUGH = ['seed', 'guidance_scale', 'optimize_prompt_options', 'watermark'] as const;

/** Multipart fields arrive as text; Ark wants JSON numbers and booleans for its own fields. */
function typed(name: string, value: unknown): unknown {
  if (typeof value !== 'string') return value;
  if (name === 'watermark') return value === 'true' ? true : value === 'false' ? false : value;
  if (name === 'seed' || name === 'guidance_scale') return value.trim() !== '' && Number.isFinite(Number(value)) ? Number(value) : value;
  if (name === 'optimize_prompt_options') {
    // Text that is not JSON goes as it is, for Ark to refuse in its own words.
    const parsed = readJsonField(value);
    if (!parsed.ok && parsed.problem === 'too_deep') throw fieldTooDeep(name);
    return parsed.ok ? parsed.value : value;
  }
  return value;
}

function arkBody(target: Target, p: ImageParams, image?: string | string[]): Record<string, unknown> {
  const body: Record<string, unknown> = { model: target.upstreamModel, prompt: p.prompt, response_format: p.response_format ?? 'url', watermark: false };
  if (p.size !== undefined && p.size !== 'auto') body.size = p.size;
  if (image !== undefined) body.image = image;
  for (const k of PASS_THROUGH) if (p.extra[k] !== undefined) body[k] = typed(k, p.extra[k]);
  return body;
}

interface ArkAnswer {
  created: number;
  data: ImageDatum[];
  errors: string[];
  outputTokens: number;
}

async function call1(call: ImagesCall, target: Target, body: Record<string, unknown>): Promise<ArkAnswer> {
  const res = await call.upstream.send({ url: arkUrl(target, '/images/generations'), method: 'POST', headers: arkHeaders(target), body: JSON.stringify(body), signal: call.signal });
  if (res.statusCode < 200 || res.statusCode >= 300) throw await arkFailure(res);
  const json = (await readJsonBody(res, call.signal)) as Record<string, unknown> | null;
  if (!json || typeof json !== 'object' || !Array.isArray(json.data)) {
    throw new UpstreamFailure('malformed', 'the Ark images answer has no data array', res.statusCode);
  }
  const data: ImageDatum[] = [];
  const errors: string[] = [];
  for (const item of json.data as unknown[]) {
    const d = (item ?? {}) as { url?: unknown; b64_json?: unknown; error?: { code?: unknown; message?: unknown } };
    if (typeof d.url === 'string') data.push({ url: d.url });
    else if (typeof d.b64_json === 'string') data.push({ b64_json: d.b64_json });
    else if (d.error) errors.push(`${String(d.error.code ?? 'error')}: ${String(d.error.message ?? '')}`.trim());
  }
  const usage = (json.usage ?? {}) as { output_tokens?: unknown };
  return {
    created: typeof json.created === 'number' ? json.created : Math.floor(Date.now() / 1000),
    data,
    errors,
    outputTokens: typeof usage.output_tokens === 'number' ? usage.output_tokens : 0,
  };
}

/** Runs the calls n needs and folds their answers into one OpenAI ImagesResponse. */
async function run(call: ImagesCall, target: Target, p: ImageParams, image?: string | string[]): Promise<ImagesResult> {
  const n = p.n ?? 1;
  const base = arkBody(target, p, image);
  let answers: ArkAnswer[];
  if (n > 1 && p.extra.sequential_image_generation === 'auto') {
    answers = [await call1(call, target, { ...base, sequential_image_generation: 'auto', sequential_image_generation_options: { max_images: n } })];
  } else {
    const settled = await Promise.allSettled(Array.from({ length: n }, () => call1(call, target, { ...base, sequential_image_generation: 'disabled' })));
    answers = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    // Some images are better than none: fail only when every call failed (the relay may then try another channel).
    if (!answers.length) throw (settled[0] as PromiseRejectedResult).reason;
  }
  const data = answers.flatMap((a) => a.data);
  if (!data.length) {
    const why = answers.flatMap((a) => a.errors)[0] ?? 'no image was generated';
    // A refused prompt or image is the client's to change, not a reason to try another channel.
    throw new UpstreamFailure('status', why, 400, 'ImageNotGenerated');
  }
  const output = answers.reduce((s, a) => s + a.outputTokens, 0);
  return {
    created: Math.max(...answers.map((a) => a.created)),
    data,
    usage: { input_tokens: 0, input_tokens_details: { text_tokens: 0, image_tokens: 0 }, output_tokens: output, total_tokens: output },
  };
}

async function edit(call: ImagesCall, target: Target, input: EditInput): Promise<ImagesResult> {
  if (input.mask) {
    throw new GatewayError(400, 'unsupported_parameter', 'This model\'s provider (Seedream) cannot edit with a mask; send the image(s) and the prompt without `mask`.', {}, 'mask');
  }
  const urls = await Promise.all(input.images.map(async (img) => `data:image/${img.type};base64,${(await readFile(img.path)).toString('base64')}`));
  return run(call, target, input, urls.length === 1 ? urls[0] : urls);
}

export const arkImages: ImagesAdapter = {
  generate: (call, target, params) => run(call, target, params),
  edit,
};

import { sendJson, type SimContext, type SimRoute } from './router.js';
import { crc32, patternImage, seedOf } from './png.js';
import { sniffImageType } from '../http/image-type.js';
import { authenticate, googleError } from './veo-video.js';

// Image output of the Gemini API, from its public docs (ai.google.dev): the Gemini image models
// ("Nano Banana") answer generateContent with the image as an inlineData part
// (generationConfig.imageConfig.aspectRatio, and imageSize 1K/2K/4K on gemini-3-pro-image), input
// images as inline_data parts, usageMetadata in tokens, and a refusal as promptFeedback.blockReason
// or a candidate whose finishReason is IMAGE_SAFETY. Imagen answers :predict with
// predictions[].bytesBase64Encoded (sampleCount 1–4, aspectRatio). Markers: [sim:sensitive]
// refuses the prompt (promptFeedback.blockReason; Imagen: no predictions); [moderation] filters the
// output (a candidate ending IMAGE_SAFETY without an image; Imagen: no predictions); [fail] is a
// 500 INTERNAL error; [text-only] makes a Gemini model answer with text and no image (finishReason
// STOP), as it does when it chats instead of drawing.

const SENSITIVE = '[sim:sensitive]';
const MODERATED = '[moderation]';
const FAIL = '[fail]';
const TEXT_ONLY = '[text-only]';
const internal = (ctx: SimContext) => sendJson(ctx.res, 500, googleError(500, 'An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting'));
/** Output size per aspect ratio at 1K (Gemini's table); 2K and 4K scale it. */
const SIZES: Record<string, [number, number]> = {
  '1:1': [1024, 1024], '2:3': [832, 1248], '3:2': [1248, 832], '3:4': [864, 1184], '4:3': [1184, 864],
  '4:5': [896, 1152], '5:4': [1152, 896], '9:16': [768, 1344], '16:9': [1344, 768], '21:9': [1536, 672],
};
/** Imagen's output size per aspect ratio at 1K. */
const IMAGEN: Record<string, [number, number]> = { '1:1': [1024, 1024], '3:4': [896, 1280], '4:3': [1280, 896], '9:16': [768, 1408], '16:9': [1408, 768] };
/** Image tokens billed per output image (1K/2K and 4K). */
const TOKENS = { small: 1290, pro: 1120, pro4k: 2000 };

const bad = (ctx: SimContext, message: string) => sendJson(ctx.res, 400, googleError(400, message));

function parse(ctx: SimContext): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(ctx.body.toString('utf8'));
    if (v && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {
    // fall through
  }
  bad(ctx, 'Invalid JSON payload received.');
  return undefined;
}

function generateContent(ctx: SimContext): void {
  const model = ctx.params[0];
  const body = parse(ctx);
  if (!body) return;
  const contents = body.contents;
  if (!Array.isArray(contents) || !contents.length) return bad(ctx, '* GenerateContentRequest.contents: contents is not specified');
  let prompt = '';
  const inputs: Buffer[] = [];
  for (const c of contents as { parts?: unknown }[]) {
    if (!Array.isArray(c?.parts) || !c.parts.length) return bad(ctx, '* GenerateContentRequest.contents.parts: contents.parts must not be empty.');
    for (const p of c.parts as Record<string, unknown>[]) {
      if (typeof p.text === 'string') prompt += p.text;
      const inline = (p.inline_data ?? p.inlineData) as { data?: unknown; mime_type?: unknown; mimeType?: unknown } | undefined;
      if (inline) {
        const bytes = typeof inline.data === 'string' ? Buffer.from(inline.data, 'base64') : Buffer.alloc(0);
        if (!sniffImageType(bytes)) return bad(ctx, 'Unable to process input image. Please retry or report in https://developers.generativeai.google/guide/troubleshooting');
        inputs.push(bytes);
      }
    }
  }
  if (inputs.length > 14) return bad(ctx, 'At most 14 input images are supported.');
  const config = (body.generationConfig ?? {}) as { responseModalities?: unknown; imageConfig?: { aspectRatio?: unknown; imageSize?: unknown } };
  const modalities = Array.isArray(config.responseModalities) ? config.responseModalities : ['TEXT', 'IMAGE'];
  if (!modalities.includes('IMAGE')) return bad(ctx, 'responseModalities must include IMAGE for this model.');
  const ratio = config.imageConfig?.aspectRatio ?? '1:1';
  if (typeof ratio !== 'string' || !SIZES[ratio]) return bad(ctx, `* GenerateContentRequest.generation_config.image_config.aspect_ratio: unsupported aspect ratio ${String(ratio)}; use one of ${Object.keys(SIZES).join(', ')}.`);
  const pro = model.startsWith('gemini-3');
  const tier = config.imageConfig?.imageSize ?? '1K';
  if (tier !== '1K' && (!pro || (tier !== '2K' && tier !== '4K'))) return bad(ctx, `* GenerateContentRequest.generation_config.image_config.image_size: ${String(tier)} is not supported by ${model}.`);
  const promptTokens = Math.ceil(prompt.length / 4) + inputs.length * 258;
  if (prompt.includes(SENSITIVE)) {
    return sendJson(ctx.res, 200, { promptFeedback: { blockReason: 'PROHIBITED_CONTENT' }, usageMetadata: { promptTokenCount: promptTokens, totalTokenCount: promptTokens }, modelVersion: model });
  }
  if (prompt.includes(FAIL)) return internal(ctx);
  if (prompt.includes(TEXT_ONLY)) {
    return sendJson(ctx.res, 200, { candidates: [{ content: { role: 'model', parts: [{ text: 'Which style would you like the image in?' }] }, finishReason: 'STOP', index: 0 }], usageMetadata: { promptTokenCount: promptTokens, candidatesTokenCount: 9, totalTokenCount: promptTokens + 9 }, modelVersion: model });
  }
  if (prompt.includes(MODERATED)) {
    return sendJson(ctx.res, 200, { candidates: [{ content: { role: 'model', parts: [] }, finishReason: 'IMAGE_SAFETY', index: 0 }], usageMetadata: { promptTokenCount: promptTokens, totalTokenCount: promptTokens }, modelVersion: model });
  }
  const scale = tier === '4K' ? 4 : tier === '2K' ? 2 : 1;
  const [w, h] = SIZES[ratio].map((v) => v * scale);
  const png = patternImage(w, h, (seedOf(prompt) ^ crc32(...inputs)) >>> 0);
  const out = pro ? (tier === '4K' ? TOKENS.pro4k : TOKENS.pro) : TOKENS.small;
  sendJson(ctx.res, 200, {
    candidates: [{ content: { role: 'model', parts: [{ text: 'Here is the image.' }, { inlineData: { mimeType: 'image/png', data: png.toString('base64') } }] }, finishReason: 'STOP', index: 0 }],
    usageMetadata: { promptTokenCount: promptTokens, candidatesTokenCount: out, totalTokenCount: promptTokens + out },
    modelVersion: model,
  });
}

function predict(ctx: SimContext): void {
  const body = parse(ctx);
  if (!body) return;
  const instances = body.instances;
  const prompt = Array.isArray(instances) && instances.length === 1 ? (instances[0] as { prompt?: unknown }).prompt : undefined;
  if (typeof prompt !== 'string' || !prompt.trim()) return bad(ctx, 'instances[0].prompt is required.');
  const p = (body.parameters ?? {}) as { sampleCount?: unknown; aspectRatio?: unknown; imageSize?: unknown };
  const count = p.sampleCount ?? 4;
  if (!Number.isInteger(count) || (count as number) < 1 || (count as number) > 4) return bad(ctx, 'sampleCount must be from 1 to 4.');
  const ratio = p.aspectRatio ?? '1:1';
  if (typeof ratio !== 'string' || !IMAGEN[ratio]) return bad(ctx, `aspectRatio must be one of ${Object.keys(IMAGEN).join(', ')}.`);
  const tier = p.imageSize ?? '1K';
  if (tier !== '1K' && tier !== '2K') return bad(ctx, 'imageSize must be 1K or 2K.');
  // Filtered images are left out of predictions; a prompt that is refused leaves none.
  if (prompt.includes(FAIL)) return internal(ctx);
  if (prompt.includes(SENSITIVE) || prompt.includes(MODERATED)) return sendJson(ctx.res, 200, {});
  const [w, h] = IMAGEN[ratio].map((v) => (tier === '2K' ? v * 2 : v));
  const seed = seedOf(prompt);
  sendJson(ctx.res, 200, {
    predictions: Array.from({ length: count as number }, (_, i) => ({ mimeType: 'image/png', bytesBase64Encoded: patternImage(w, h, (seed + i * 0x9e3779b1) >>> 0).toString('base64') })),
  });
}

export function geminiImageRoutes(): SimRoute[] {
  const errorBody = (status: number, message: string) => googleError(status, message);
  return [
    { name: 'gemini.images.generate', method: 'POST', pattern: /^\/v1beta\/models\/(gemini-[^/:]*image[^/:]*):generateContent$/, auth: true, authenticate, errorBody, handle: generateContent },
    { name: 'imagen.images.predict', method: 'POST', pattern: /^\/v1beta\/models\/(imagen-[^/:]+):predict$/, auth: true, authenticate, errorBody, handle: predict },
  ];
}

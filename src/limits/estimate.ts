// What a chat request may cost at most, counted before the call so the hold covers the bill.
//
// Input tokens are bounded without a tokenizer: every tokenizer the gateway meets (byte-level BPE
// of OpenAI and Anthropic, SentencePiece with byte fallback of Gemini) spends at least one byte of
// UTF-8 text per token, so a body's byte count bounds the tokens of all the text in it — messages,
// system prompt, tool definitions, and the per-message framing (the JSON around each message is
// longer than the few tokens a provider adds per message). Dividing by 4 (the average for English
// prose) underestimated short symbols and CJK text several times over.
//
// Image parts are the exception both ways: a short URL is a few dozen bytes but costs hundreds or
// thousands of tokens, and a base64 image is megabytes but the provider resizes it to a bounded
// number of tokens. So each image part counts at the model's per-image token cost instead of its
// bytes.

/** Tokens one image part may cost when the model sets no `image_input_tokens`: OpenAI's high-detail
 * maximum (8 tiles × 170 + 85 = 1,445) and Anthropic's (≈1.15 megapixels / 750 ≈ 1,600) fit under it. */
export const DEFAULT_IMAGE_INPUT_TOKENS = 1_600;

const IMAGE_TYPES = new Set(['image_url', 'image', 'input_image']);

interface Walk {
  images: number;
  /** Characters of the strings inside image parts (ASCII URLs or base64: bytes). */
  imageChars: number;
}

/** Counts image parts (OpenAI `image_url`/`input_image`, Anthropic `image`, Gemini inline/file image data). */
function walk(node: unknown, acc: Walk, inImage: boolean, depth: number): void {
  if (depth > 64 || node === null || typeof node !== 'object') {
    if (inImage && typeof node === 'string') acc.imageChars += node.length;
    return;
  }
  if (Array.isArray(node)) {
    for (const item of node) walk(item, acc, inImage, depth + 1);
    return;
  }
  const o = node as Record<string, unknown>;
  let image = inImage;
  if (!inImage) {
    const gemini = (o.inlineData ?? o.inline_data ?? o.fileData ?? o.file_data) as { mimeType?: unknown; mime_type?: unknown } | undefined;
    const mime = gemini && typeof gemini === 'object' ? String(gemini.mimeType ?? gemini.mime_type ?? '') : '';
    if ((typeof o.type === 'string' && IMAGE_TYPES.has(o.type)) || mime.startsWith('image/')) {
      image = true;
      acc.images++;
    }
  }
  for (const key in o) {
    const v = o[key];
    if (typeof v === 'string') {
      if (image) acc.imageChars += v.length;
    } else if (v !== null && typeof v === 'object') walk(v, acc, image, depth + 1);
  }
}

/**
 * An upper bound of a chat request's input tokens: its body bytes, with each image part's bytes
 * replaced by `perImageTokens`. `bodyBytes` is the Content-Length when the client sent one.
 */
export function inputTokenBound(body: unknown, bodyBytes: number, perImageTokens = DEFAULT_IMAGE_INPUT_TOKENS): number {
  const bytes = bodyBytes > 0 ? bodyBytes : Buffer.byteLength(JSON.stringify(body ?? ''));
  const acc: Walk = { images: 0, imageChars: 0 };
  walk(body, acc, false, 0);
  return Math.max(0, bytes - acc.imageChars) + acc.images * perImageTokens;
}

import { sniffImageType } from '../http/image-type.js';
import { crc32, seedOf } from './png.js';
import { pictures, type Picture } from './images.js';
import type { SimState } from './router.js';

// What the simulator's image parts of the second wave share (Kling, MiniMax, Ideogram, Recraft,
// Stability, fal, Replicate): pictures sized from an aspect ratio, checks of images sent as URLs,
// data URLs or raw base64, and the run time of a queued image task. The outcome markers are
// those of video-common.ts: "[fail]" ends a generation in the provider's failure, "[moderation]"
// in its content-safety refusal.

/** A queued image task runs a fifth of a video task (2 s with the simulator's default 10 s). */
export function imageTaskMs(state: SimState): number {
  return Math.round(state.options.videoSeconds * 200);
}

/** "16:9" (or "16x9") → [16, 9]; undefined when it is not a ratio of two positive integers. */
export function ratioOf(ratio: string): [number, number] | undefined {
  const m = /^(\d{1,2})[:x](\d{1,2})$/.exec(ratio);
  if (!m || !Number(m[1]) || !Number(m[2])) return undefined;
  return [Number(m[1]), Number(m[2])];
}

/**
 * The pixel size of a picture of `ratio` whose area is about `area` pixels, both sides multiples
 * of 16 (as generation models draw them).
 */
export function sizeForRatio(ratio: [number, number], area: number): [number, number] {
  const [a, b] = ratio;
  const w = Math.sqrt((area * a) / b);
  const snap = (v: number) => Math.max(16, Math.round(v / 16) * 16);
  return [snap(w), snap((w * b) / a)];
}

/** `n` pictures of one size, seeded from the prompt and any input bytes (another input, another picture). */
export function drawPictures(n: number, size: [number, number], prompt: string, inputs: Buffer[] = [], seed?: number): Picture[] {
  const base = (seedOf(prompt) ^ (inputs.length ? crc32(...inputs) : 0) ^ (seed ?? 0)) >>> 0;
  return pictures(n, size, base);
}

/** The bytes of an image given as a data URL (`data:image/<fmt>;base64,…`); a message when it is not one. */
export function dataUrlImage(value: string): Buffer | string {
  const m = /^data:image\/([a-z]+);base64,([A-Za-z0-9+/=]+)$/.exec(value);
  if (!m) return 'must be an http(s) URL or data:image/<format>;base64,<data>';
  const data = Buffer.from(m[2], 'base64');
  const type = sniffImageType(data);
  if (!type || (m[1] !== type && !(m[1] === 'jpg' && type === 'jpeg'))) return `does not decode to the declared ${m[1]} image`;
  return data;
}

/** The bytes of an image given as raw base64 (no data: prefix, as Kling takes it); a message when it is not one. */
export function rawBase64Image(value: string): Buffer | string {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(value)) return 'must be an http(s) URL or Base64 without the data: prefix';
  const data = Buffer.from(value, 'base64');
  return sniffImageType(data) ? data : 'does not decode to a png, jpeg or webp image';
}

/**
 * An image given as an http(s) URL (its bytes are not fetched: none), or inline by `inline`;
 * a message when neither.
 */
export function imageInput(value: unknown, inline: (v: string) => Buffer | string): Buffer | null | string {
  if (typeof value !== 'string' || !value) return 'must be a non-empty string';
  if (/^https?:\/\/[^\s]+$/.test(value)) return null;
  return inline(value);
}

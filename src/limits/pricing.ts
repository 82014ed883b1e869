import type { ModelConfig } from '../config/schema.js';

// Prices are USD per million units, so the cost of n units in micro-dollars is n × price.

export function chatCostMicros(model: ModelConfig, inputTokens: number, outputTokens: number): number {
  const p = model.price ?? {};
  return Math.ceil(inputTokens * (p.input_per_million ?? 0) + outputTokens * (p.output_per_million ?? 0));
}

export function imageCostMicros(model: ModelConfig, images: number): number {
  return Math.ceil(images * (model.price?.per_image ?? 0) * 1_000_000);
}

export function videoCostMicros(model: ModelConfig, videoTokens: number): number {
  return Math.ceil(videoTokens * (model.price?.per_million_tokens ?? 0));
}

// Seedance output sizes (1.0 / 1.5), width × height by resolution and ratio.
const SIZES: Record<string, Record<string, [number, number]>> = {
  '480p': { '16:9': [864, 480], '4:3': [736, 544], '1:1': [640, 640], '3:4': [544, 736], '9:16': [480, 864], '21:9': [960, 416] },
  '720p': { '16:9': [1248, 704], '4:3': [1120, 832], '1:1': [960, 960], '3:4': [832, 1120], '9:16': [704, 1248], '21:9': [1504, 640] },
  '1080p': { '16:9': [1920, 1088], '4:3': [1664, 1248], '1:1': [1440, 1440], '3:4': [1248, 1664], '9:16': [1088, 1920], '21:9': [2176, 928] },
};

export const VIDEO_FPS = 24;

/** Pixel size for a resolution and ratio; `adaptive` and unknown ratios count as 16:9. */
export function videoSize(resolution = '720p', ratio = '16:9'): [number, number] {
  const byRatio = SIZES[resolution] ?? SIZES['720p'];
  return byRatio[ratio] ?? byRatio['16:9'];
}

/** Video tokens ≈ width × height × fps × seconds / 1024 (720p 16:9, 5 s → 102,960). */
export function videoTokens(resolution: string | undefined, ratio: string | undefined, seconds: number, fps = VIDEO_FPS): number {
  const [w, h] = videoSize(resolution, ratio);
  return Math.floor((w * h * fps * seconds) / 1024);
}

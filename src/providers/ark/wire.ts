// Seedance wire facts as the simulator's Ark part plays them: output sizes and the video-token
// formula Ark bills by. Plain data, no imports. The gateway's own view of the same facts is
// manifest.yaml; test/provider-manifests-match-wire.test.ts keeps the two in step.

/** Seedance output sizes (1.0 / 1.5), width × height by resolution and ratio. */
export const SEEDANCE_SIZES: Record<string, Record<string, [number, number]>> = {
  '480p': { '16:9': [864, 480], '4:3': [736, 544], '1:1': [640, 640], '3:4': [544, 736], '9:16': [480, 864], '21:9': [960, 416] },
  '720p': { '16:9': [1248, 704], '4:3': [1120, 832], '1:1': [960, 960], '3:4': [832, 1120], '9:16': [704, 1248], '21:9': [1504, 640] },
  '1080p': { '16:9': [1920, 1088], '4:3': [1664, 1248], '1:1': [1440, 1440], '3:4': [1248, 1664], '9:16': [1088, 1920], '21:9': [2176, 928] },
};

export const SEEDANCE_FPS = 24;
export const SEEDANCE_RESOLUTIONS = ['480p', '720p', '1080p'];
export const SEEDANCE_RATIOS = ['16:9', '4:3', '1:1', '3:4', '9:16', '21:9', 'adaptive', 'keep_ratio'];

/** Pixel size for a resolution and ratio; `adaptive` and unknown ratios count as 16:9. */
export function videoSize(resolution = '720p', ratio = '16:9'): [number, number] {
  const byRatio = SEEDANCE_SIZES[resolution] ?? SEEDANCE_SIZES['720p'];
  return byRatio[ratio] ?? byRatio['16:9'];
}

/** Video tokens ≈ width × height × fps × seconds / 1024 (720p 16:9, 5 s → 102,960). */
export function videoTokens(resolution: string | undefined, ratio: string | undefined, seconds: number, fps = SEEDANCE_FPS): number {
  const [w, h] = videoSize(resolution, ratio);
  return Math.floor((w * h * fps * seconds) / 1024);
}

import { describe, expect, it } from 'vitest';
import { imageFacts } from '../../src/providers/kit/image-request.js';
import { KLING } from '../../src/providers/kling/videos.js';
import { MINIMAX } from '../../src/providers/minimax/videos.js';
import { IDEOGRAM } from '../../src/providers/ideogram/index.js';
import { RECRAFT } from '../../src/providers/recraft/index.js';
import { STABILITY } from '../../src/providers/stability/index.js';
import { REPLICATE } from '../../src/providers/replicate/videos.js';
import { KLING_IMAGE_MODELS, KLING_IMAGE_RATIOS } from '../../src/providers/kling/wire.js';
import { MINIMAX_IMAGE_MODELS, MINIMAX_IMAGE_SIZES } from '../../src/providers/minimax/wire.js';
import { IDEOGRAM_MAX_IMAGES, IDEOGRAM_RATIO_SIZES } from '../../src/providers/ideogram/wire.js';
import { RECRAFT_MAX_N, RECRAFT_MODELS } from '../../src/providers/recraft/wire.js';
import { STABILITY_RATIOS, STABILITY_SD3_MODELS } from '../../src/providers/stability/wire.js';
import { REPLICATE_MODELS, REPLICATE_RATIOS } from '../../src/providers/replicate/wire.js';

// The simulator plays each image provider from its wire tables (written from the provider's
// docs); the gateway reads its manifest. The two must not drift apart.

const sizesOf = (table: unknown) => Object.keys(table as Record<string, string>).sort();

describe('image manifests agree with the simulator wire tables', () => {
  it('Kling: ratios, resolutions, image-to-image where the model takes an image', () => {
    for (const id of ['kling-v2-1', 'kling-v2', 'kling-v1-5', 'kling-v2-new']) {
      const f = imageFacts(KLING, id);
      const w = KLING_IMAGE_MODELS[id];
      expect(f.ratios, id).toEqual(KLING_IMAGE_RATIOS);
      expect(f.resolutions?.map((r) => r.toLowerCase()), id).toEqual(w.resolutions);
      if ((f.max_images ?? 0) > 0) expect(w.image, id).toBe(true);
      if (!f.operations || f.operations.includes('generate')) expect(w.text, id).toBe(true);
    }
  });

  it('MiniMax, Ideogram, Recraft: the sizes each model draws', () => {
    for (const [id, w] of Object.entries(MINIMAX_IMAGE_MODELS)) {
      const table = imageFacts(MINIMAX, id).sizes as Record<string, string>;
      expect(Object.values(table).sort(), id).toEqual([...w.ratios].sort());
      for (const [size, ratio] of Object.entries(table)) expect(MINIMAX_IMAGE_SIZES[ratio].join('x'), id).toBe(size);
    }
    const ideogram = imageFacts(IDEOGRAM, 'ideogram-v3');
    expect(sizesOf(ideogram.sizes)).toEqual(Object.values(IDEOGRAM_RATIO_SIZES).sort());
    expect(ideogram.max_n).toBe(IDEOGRAM_MAX_IMAGES);
    for (const [id, w] of Object.entries(RECRAFT_MODELS)) {
      const f = imageFacts(RECRAFT, id);
      expect(sizesOf(f.sizes), id).toEqual(Object.values(w.sizes).sort());
      expect(f.max_n, id).toBe(RECRAFT_MAX_N);
      expect(!!f.negative_prompt, id).toBe(w.negative);
    }
  });

  it('Stability and Replicate: ratios; negative prompts on the sd3.5 models that take them', () => {
    for (const id of ['stable-image-ultra', 'stable-image-core', ...Object.keys(STABILITY_SD3_MODELS)]) expect(imageFacts(STABILITY, id).ratios, id).toEqual(STABILITY_RATIOS);
    for (const [id, w] of Object.entries(STABILITY_SD3_MODELS)) expect(!!imageFacts(STABILITY, id).negative_prompt, id).toBe(w.negative);
    for (const id of Object.keys(REPLICATE_MODELS)) if (REPLICATE_MODELS[id].inputs.aspect_ratio) expect(imageFacts(REPLICATE, id).ratios, id).toEqual(REPLICATE_RATIOS);
  });
});

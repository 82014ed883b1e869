// fal's queue (queue.fal.run) as the simulator's fal part plays it: the image models it hosts and
// the inputs each takes. Plain data, no imports. The gateway reaches any fal model by id; the
// simulator hosts these.

export interface FalModelFacts {
  /** Input fields beyond prompt, seed, num_images, output_format, enable_safety_checker, sync_mode. */
  takes: string[];
  /** Needs these inputs. */
  needs: string[];
  maxImages: number;
}

export const FAL_IMAGE_SIZES: Record<string, [number, number]> = {
  square_hd: [1024, 1024],
  square: [512, 512],
  portrait_4_3: [768, 1024],
  portrait_16_9: [576, 1024],
  landscape_4_3: [1024, 768],
  landscape_16_9: [1024, 576],
};
export const FAL_MODELS: Record<string, FalModelFacts> = {
  'fal-ai/flux/schnell': { takes: ['image_size', 'num_inference_steps', 'guidance_scale'], needs: [], maxImages: 4 },
  'fal-ai/flux/dev': { takes: ['image_size', 'num_inference_steps', 'guidance_scale'], needs: [], maxImages: 4 },
  'fal-ai/flux-pro/v1.1': { takes: ['image_size', 'safety_tolerance'], needs: [], maxImages: 4 },
  'fal-ai/flux-pro/kontext': { takes: ['image_url', 'aspect_ratio', 'guidance_scale', 'safety_tolerance'], needs: ['image_url'], maxImages: 4 },
  'fal-ai/flux-general/inpainting': { takes: ['image_url', 'mask_url', 'strength', 'image_size', 'num_inference_steps', 'guidance_scale'], needs: ['image_url', 'mask_url'], maxImages: 4 },
};
export const FAL_RATIOS = ['21:9', '16:9', '4:3', '3:2', '1:1', '2:3', '3:4', '9:16', '9:21'];
export const FAL_FORMATS = ['jpeg', 'png'];

// Replicate's predictions API (api.replicate.com/v1) as the simulator's Replicate part plays it:
// the image models it hosts and the inputs each takes. Plain data, no imports. The gateway
// reaches any Replicate model by owner/name; the simulator hosts these.

export interface ReplicateModelFacts {
  /** Input fields beyond prompt and seed, with their allowed values where they are a list. */
  inputs: Record<string, string[] | 'number' | 'boolean' | 'image'>;
  /** Needs these inputs. */
  needs: string[];
  /** Its output is a list of file URLs (else one URL). */
  list: boolean;
}

export const REPLICATE_RATIOS = ['1:1', '16:9', '21:9', '3:2', '2:3', '4:5', '5:4', '3:4', '4:3', '9:16', '9:21'];
/** The one-megapixel picture each aspect ratio draws. */
export const REPLICATE_SIZES: Record<string, [number, number]> = {
  '1:1': [1024, 1024], '16:9': [1344, 768], '21:9': [1536, 640], '3:2': [1216, 832], '2:3': [832, 1216], '4:5': [896, 1088], '5:4': [1088, 896],
  '3:4': [896, 1152], '4:3': [1152, 896], '9:16': [768, 1344], '9:21': [640, 1536],
};
const FORMATS = ['webp', 'jpg', 'png'];
export const REPLICATE_MODELS: Record<string, ReplicateModelFacts> = {
  'black-forest-labs/flux-schnell': {
    inputs: { aspect_ratio: REPLICATE_RATIOS, num_outputs: ['1', '2', '3', '4'], output_format: FORMATS, output_quality: 'number', disable_safety_checker: 'boolean', go_fast: 'boolean', megapixels: ['1', '0.25'], num_inference_steps: 'number' },
    needs: [],
    list: true,
  },
  'black-forest-labs/flux-dev': {
    inputs: { aspect_ratio: REPLICATE_RATIOS, num_outputs: ['1', '2', '3', '4'], output_format: FORMATS, output_quality: 'number', disable_safety_checker: 'boolean', go_fast: 'boolean', megapixels: ['1', '0.25'], num_inference_steps: 'number', guidance: 'number', image: 'image', prompt_strength: 'number' },
    needs: [],
    list: true,
  },
  'black-forest-labs/flux-1.1-pro': {
    inputs: { aspect_ratio: REPLICATE_RATIOS, output_format: FORMATS, output_quality: 'number', safety_tolerance: 'number', prompt_upsampling: 'boolean', image_prompt: 'image' },
    needs: [],
    list: false,
  },
  'black-forest-labs/flux-kontext-pro': {
    inputs: { input_image: 'image', aspect_ratio: [...REPLICATE_RATIOS, 'match_input_image'], output_format: ['jpg', 'png'], safety_tolerance: 'number', prompt_upsampling: 'boolean' },
    // Without input_image Kontext draws from the prompt alone.
    needs: [],
    list: false,
  },
  'black-forest-labs/flux-fill-pro': {
    inputs: { image: 'image', mask: 'image', steps: 'number', guidance: 'number', output_format: ['jpg', 'png'], safety_tolerance: 'number', prompt_upsampling: 'boolean' },
    needs: ['image'],
    list: false,
  },
};

// Recraft (external.api.recraft.ai/v1) as the simulator's Recraft part plays it: the raster
// models, the sizes each draws and the styles it takes. Plain data, no imports.

export interface RecraftModelFacts {
  /** Every size the model draws, by aspect ratio ("w:h" → "WxH"). */
  sizes: Record<string, string>;
  /** The `style` values it takes (raster styles); none when the model takes no style. */
  styles: string[];
  /** Takes negative_prompt. */
  negative: boolean;
}

export const RECRAFT_MODELS: Record<string, RecraftModelFacts> = {
  recraftv3: {
    sizes: {
      '1:1': '1024x1024', '4:3': '1365x1024', '3:4': '1024x1365', '3:2': '1536x1024', '2:3': '1024x1536', '16:9': '1820x1024', '9:16': '1024x1820', '1:2': '1024x2048',
      '2:1': '2048x1024', '7:5': '1434x1024', '5:7': '1024x1434', '4:5': '1024x1280', '5:4': '1280x1024', '3:5': '1024x1707', '5:3': '1707x1024',
    },
    styles: ['any', 'realistic_image', 'digital_illustration'],
    negative: true,
  },
  recraftv4: {
    sizes: {
      '1:1': '1024x1024', '2:1': '1536x768', '1:2': '768x1536', '3:2': '1280x832', '2:3': '832x1280', '4:3': '1216x896', '3:4': '896x1216', '5:4': '1152x896',
      '4:5': '896x1152', '6:10': '832x1344', '14:10': '1280x896', '10:14': '896x1280', '16:9': '1344x768', '9:16': '768x1344',
    },
    styles: [],
    negative: false,
  },
};
export const RECRAFT_MAX_N = 6;

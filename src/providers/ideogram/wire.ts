// Ideogram 3.0 (api.ideogram.ai/v1/ideogram-v3/{generate,edit,remix}) as the simulator's Ideogram
// part plays it: what a request may ask. Plain data, no imports.

export const IDEOGRAM_RATIOS = ['1x3', '3x1', '1x2', '2x1', '9x16', '16x9', '10x16', '16x10', '2x3', '3x2', '3x4', '4x3', '4x5', '5x4', '1x1'];
/** The picture an aspect ratio draws when no resolution is given. */
export const IDEOGRAM_RATIO_SIZES: Record<string, string> = {
  '1x3': '512x1536',
  '3x1': '1536x512',
  '1x2': '704x1408',
  '2x1': '1408x704',
  '9x16': '736x1312',
  '16x9': '1312x736',
  '10x16': '800x1280',
  '16x10': '1280x800',
  '2x3': '832x1248',
  '3x2': '1248x832',
  '3x4': '864x1152',
  '4x3': '1152x864',
  '4x5': '896x1120',
  '5x4': '1120x896',
  '1x1': '1024x1024',
};
/** Every `resolution` Ideogram 3.0 draws. */
export const IDEOGRAM_RESOLUTIONS = [
  '512x1536', '576x1408', '576x1472', '576x1536', '640x1344', '640x1408', '640x1472', '640x1536', '704x1152', '704x1216', '704x1280', '704x1344', '704x1408',
  '704x1472', '736x1312', '768x1088', '768x1216', '768x1280', '768x1344', '800x1280', '832x960', '832x1024', '832x1088', '832x1152', '832x1216', '832x1248',
  '864x1152', '896x960', '896x1024', '896x1088', '896x1120', '896x1152', '960x832', '960x896', '960x1024', '960x1088', '1024x832', '1024x896', '1024x960',
  '1024x1024', '1088x768', '1088x832', '1088x896', '1088x960', '1120x896', '1152x704', '1152x832', '1152x864', '1152x896', '1216x704', '1216x768', '1216x832',
  '1248x832', '1280x704', '1280x768', '1280x800', '1312x736', '1344x640', '1344x704', '1344x768', '1408x576', '1408x640', '1408x704', '1472x576', '1472x640',
  '1472x704', '1536x512', '1536x576', '1536x640',
];
export const IDEOGRAM_SPEEDS = ['FLASH', 'TURBO', 'DEFAULT', 'QUALITY'];
export const IDEOGRAM_STYLES = ['AUTO', 'GENERAL', 'REALISTIC', 'DESIGN', 'FICTION'];
export const IDEOGRAM_MAGIC = ['AUTO', 'ON', 'OFF'];
export const IDEOGRAM_MAX_IMAGES = 8;
export const IDEOGRAM_MAX_SEED = 2147483647;

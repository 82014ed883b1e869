// Jimeng video generation (Volcengine visual API) as the simulator's Jimeng part plays it: the
// req_keys it serves. Plain data, no imports. The gateway's own view (which req_key a model and
// mode send) is manifest.yaml.

export interface JimengReqKey {
  /** How many images the request carries: 0 text, 1 first frame, 2 first + last frame. */
  images: number[];
  resolution: '720p' | '1080p';
}

export const JIMENG_REQ_KEYS: Record<string, JimengReqKey> = {
  jimeng_t2v_v30: { images: [0], resolution: '720p' },
  jimeng_i2v_first_v30: { images: [1], resolution: '720p' },
  jimeng_i2v_first_tail_v30: { images: [2], resolution: '720p' },
  jimeng_t2v_v30_1080p: { images: [0], resolution: '1080p' },
  jimeng_i2v_first_v30_1080: { images: [1], resolution: '1080p' },
  jimeng_i2v_first_tail_v30_1080: { images: [2], resolution: '1080p' },
  jimeng_ti2v_v30_pro: { images: [0, 1], resolution: '1080p' },
};
/** frames = 24 × seconds + 1: 5 s or 10 s. */
export const JIMENG_FRAMES = [121, 241];
export const JIMENG_RATIOS = ['16:9', '4:3', '1:1', '3:4', '9:16', '21:9'];

/**
 * The one Volcengine account the simulator's Jimeng part knows (access key → secret key). A
 * simulator channel signs with it when it plays Jimeng, so the real signing code runs offline.
 */
export const JIMENG_SIMULATOR_ACCOUNT = { apiKey: 'AKLTsimulator', apiSecret: 'jimeng-simulator-secret' };

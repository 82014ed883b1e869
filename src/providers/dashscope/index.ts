import type { Provider } from '../provider.js';
import { WAN_DEFAULT_MODELS } from './models.js';
import { dashscopeVideos } from './videos.js';

/** Alibaba Cloud Model Studio (DashScope): Wan video synthesis. */
export const dashscope: Provider = {
  type: 'dashscope',
  videos: dashscopeVideos,
  needsBaseUrl: true,
  defaults: {
    baseUrl: 'https://dashscope-intl.aliyuncs.com',
    env: { apiKey: 'DASHSCOPE_API_KEY' },
    models: WAN_DEFAULT_MODELS,
    ownedBy: 'alibaba',
    simulated: true,
  },
  // The simulator serves DashScope's paths (/api/v1/…) at its origin.
  simulator: { path: '', claims: { videos: /^wanx?2\./ } },
};

import { kitProvider } from '../kit/provider.js';
import { DASHSCOPE } from './videos.js';

/** Alibaba Cloud Model Studio (DashScope): Wan video synthesis. */
export const dashscope = kitProvider(DASHSCOPE);

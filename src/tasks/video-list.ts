import { errors } from '../http/errors.js';
import type { TaskListRepo } from '../store/repos/task-list.js';
import type { TasksRepo } from '../store/repos/tasks.js';
import { pageLimit, queryReader } from './list.js';
import { TASK_ID } from './request.js';
import { toVideoObject, type VideoObject } from './openai-videos.js';

// GET /v1/videos: the calling key's videos a page at a time, as OpenAI's cursor page. The cursor
// `after` is the id of the last video of the previous page (`last_id`); the page is the same keyset
// scan as GET /v1/video/generations, from that video's position.

export interface VideoPage {
  object: 'list';
  data: VideoObject[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

const KNOWN = ['after', 'limit', 'order'];

export class VideoLister {
  constructor(
    private readonly list: TaskListRepo,
    private readonly tasks: TasksRepo,
    private readonly retainDays: number,
  ) {}

  async page(keyId: string, query: Record<string, unknown>): Promise<VideoPage> {
    const one = queryReader(query, KNOWN);
    const limit = pageLimit(one('limit'));
    const order = one('order') ?? 'desc';
    if (order !== 'asc' && order !== 'desc') throw errors.invalidRequest('order must be asc or desc.', 'order');
    const afterId = one('after');
    let after: { submitTime: number; taskId: string } | undefined;
    if (afterId !== undefined) {
      const row = TASK_ID.test(afterId) ? await this.tasks.get(afterId) : undefined;
      // Another key's id is no cursor (it tells nothing about that video either).
      if (!row || row.key_id !== keyId) throw errors.invalidRequest('after must be the id of one of your videos (the last_id of the previous page).', 'after');
      after = { submitTime: row.submit_time, taskId: row.task_id };
    }
    const rows = await this.list.videoPage({ keyId, after, limit: limit + 1, order });
    const hasMore = rows.length > limit;
    const now = Date.now();
    const data = (hasMore ? rows.slice(0, limit) : rows).map((r) => toVideoObject(r, { now, retainDays: this.retainDays }));
    return { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data[data.length - 1]?.id ?? null, has_more: hasMore };
  }
}

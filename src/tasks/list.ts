import { errors } from '../http/errors.js';
import type { TaskListRepo } from '../store/repos/task-list.js';
import { toTaskRecord, type TaskRecord } from './record.js';
import { TASK_ID } from './request.js';

// GET /v1/video/generations: the calling key's tasks, newest first, a page at a time. The cursor
// (`next_after`) is opaque to clients: base64url of "<submit_time>.<task_id>" of a page's last task.

export const LIST_STATUSES = ['SUBMITTED', 'QUEUED', 'IN_PROGRESS', 'SUCCESS', 'FAILURE'];
const KNOWN = ['status', 'model', 'limit', 'after'];
const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 100;

export interface TaskPage {
  tasks: TaskRecord[];
  has_more: boolean;
  next_after: string | null;
}

interface ListQuery {
  status?: string;
  model?: string;
  limit: number;
  after?: { submitTime: number; taskId: string };
}

const bad = (message: string, param: string) => errors.invalidRequest(message, param);

export function encodeCursor(submitTime: number, taskId: string): string {
  return Buffer.from(`${submitTime}.${taskId}`, 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string): { submitTime: number; taskId: string } | null {
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(cursor)) return null;
  const m = /^(\d{1,15})\.(.+)$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!m || !TASK_ID.test(m[2])) return null;
  return { submitTime: Number(m[1]), taskId: m[2] };
}

/** A reader of a query string's parameters: unknown names are a 400, and each may be given once. */
export function queryReader(query: Record<string, unknown>, known: readonly string[]): (k: string) => string | undefined {
  for (const k of Object.keys(query)) if (!known.includes(k)) throw bad(`Unknown query parameter "${k}"; known: ${known.join(', ')}.`, k);
  return (k) => {
    const v = query[k];
    if (v === undefined) return undefined;
    if (typeof v !== 'string') throw bad(`The query parameter "${k}" may be given once.`, k);
    return v;
  };
}

/** `limit`: 1–100, 20 when absent. */
export function pageLimit(limit: string | undefined): number {
  if (limit === undefined) return DEFAULT_LIMIT;
  if (!/^\d{1,3}$/.test(limit) || Number(limit) < 1 || Number(limit) > MAX_LIMIT) throw bad(`limit must be an integer from 1 to ${MAX_LIMIT}.`, 'limit');
  return Number(limit);
}

/** Checks the query string; every mistake is a 400 naming the parameter. */
export function parseListQuery(query: Record<string, unknown>): ListQuery {
  const one = queryReader(query, KNOWN);
  const out: ListQuery = { limit: pageLimit(one('limit')) };
  const status = one('status');
  if (status !== undefined) {
    if (!LIST_STATUSES.includes(status)) throw bad(`status must be one of ${LIST_STATUSES.join(', ')}.`, 'status');
    out.status = status;
  }
  const model = one('model');
  if (model !== undefined) {
    if (!model || model.length > 200) throw bad('model must be a model id (1–200 characters).', 'model');
    out.model = model;
  }
  const after = one('after');
  if (after !== undefined) {
    const c = decodeCursor(after);
    if (!c) throw bad('after must be the next_after value of a previous page.', 'after');
    out.after = c;
  }
  return out;
}

export class TaskLister {
  constructor(private readonly repo: TaskListRepo) {}

  /** One page of `keyId`'s tasks; one row more than asked for tells whether another page follows. */
  async list(keyId: string, query: Record<string, unknown>): Promise<TaskPage> {
    const q = parseListQuery(query);
    const rows = await this.repo.page({ keyId, status: q.status, model: q.model, after: q.after, limit: q.limit + 1 });
    const hasMore = rows.length > q.limit;
    const page = hasMore ? rows.slice(0, q.limit) : rows;
    const last = page[page.length - 1];
    const now = Date.now();
    return {
      tasks: page.map((r) => toTaskRecord(r, now)),
      has_more: hasMore,
      next_after: hasMore && last ? encodeCursor(last.submit_time, last.task_id) : null,
    };
  }
}

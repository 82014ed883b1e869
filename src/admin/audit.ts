import type { AuditRepo, AuditRow } from '../store/repos/audit.js';
import { decodeCursor, encodeCursor } from './cursor.js';

export interface AuditView {
  id: number;
  at: string;
  actor: string;
  action: string;
  target: string;
  detail: unknown;
  ip: string;
}

function view(r: AuditRow): AuditView {
  let detail: unknown = {};
  try {
    detail = JSON.parse(r.detail);
  } catch {
    detail = {};
  }
  return { id: r.id, at: new Date(r.at).toISOString(), actor: r.actor, action: r.action, target: r.target, detail, ip: r.ip };
}

/** The audit log: every admin action, by whom and when. Details never hold a key or token. */
export class Audit {
  constructor(private readonly repo: AuditRepo) {}

  async record(actor: string, action: string, target = '', detail: Record<string, unknown> = {}, ip = ''): Promise<void> {
    await this.repo.insert({ at: Date.now(), actor, action, target, detail: JSON.stringify(detail), ip });
  }

  async list(limit: number, cursor?: string): Promise<{ data: AuditView[]; next_cursor: string | null }> {
    const before = decodeCursor(cursor, ['number'])?.[0];
    const rows = await this.repo.page(limit + 1, before);
    const page = rows.slice(0, limit);
    return { data: page.map(view), next_cursor: rows.length > limit ? encodeCursor(page[page.length - 1].id) : null };
  }
}

import type { Insertable, Kysely, Selectable } from 'kysely';
import type { Database, RequestLogTable } from '../schema.js';
import type { UsageCursor, UsageFilter } from './usage-reports.js';

// The request logs: written one row per model request (when request_logs.enabled), read by the
// admin API newest first with keyset pages, and cut to the retention by time.

export type RequestLogRow = Selectable<RequestLogTable>;
export type NewRequestLog = Omit<Insertable<RequestLogTable>, 'id'>;

/** The usage ledger's filters, and a trace id. */
export interface RequestLogFilter extends UsageFilter {
  traceId?: string;
}

export type RequestLogCursor = UsageCursor;

const NUMERIC = ['id', 'created_at', 'status', 'latency_ms', 'input_units', 'output_units', 'cost_micros'] as const;

export class RequestLogsRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(row: NewRequestLog): Promise<void> {
    await this.db.insertInto('request_logs').values(row).execute();
  }

  async page(f: RequestLogFilter, limit: number, cursor?: RequestLogCursor): Promise<RequestLogRow[]> {
    let q = this.db.selectFrom('request_logs').selectAll();
    if (f.keyId) q = q.where('key_id', '=', f.keyId);
    if (f.model) q = q.where('model', '=', f.model);
    if (f.traceId) q = q.where('trace_id', '=', f.traceId);
    if (f.status !== undefined) q = q.where('status', '=', f.status);
    if (f.statusClass !== undefined) q = q.where('status', '>=', f.statusClass * 100).where('status', '<', f.statusClass * 100 + 100);
    if (f.fromMs !== undefined) q = q.where('created_at', '>=', f.fromMs);
    if (f.toMs !== undefined) q = q.where('created_at', '<', f.toMs);
    if (cursor) {
      const { createdAt, id } = cursor;
      q = q.where((eb) => eb.or([eb('created_at', '<', createdAt), eb.and([eb('created_at', '=', createdAt), eb('id', '<', id)])]));
    }
    const rows = await q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
    for (const r of rows) for (const c of NUMERIC) (r as Record<string, unknown>)[c] = Number(r[c]);
    return rows;
  }

  /** Deletes rows older than `beforeMs`; returns how many. */
  async deleteBefore(beforeMs: number): Promise<number> {
    const r = await this.db.deleteFrom('request_logs').where('created_at', '<', beforeMs).executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}

import type { RequestLogFilter, RequestLogRow, RequestLogsRepo } from '../store/repos/request-logs.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import { csvPages } from './csv.js';
import { adminErrors } from './errors.js';
import { usd } from './money.js';
import { int, str, type Query } from './query.js';
import type { UsageAdmin } from './usage.js';

// The request logs for operators: filtered pages newest first (key, model, status, from, to,
// trace_id) and a CSV export, as the usage ledger's.

export interface RequestLogView {
  id: number;
  created_at: string;
  trace_id: string;
  key_id: string;
  model: string;
  channel: string;
  endpoint: string;
  route: string;
  status: number;
  latency_ms: number;
  input_units: number;
  output_units: number;
  cost_usd: string;
  request_body: string;
  response_body: string;
}

function view(r: RequestLogRow): RequestLogView {
  const { cost_micros, created_at, ...rest } = r;
  return { ...rest, created_at: new Date(created_at).toISOString(), cost_usd: usd(cost_micros) };
}

const CSV_COLUMNS: (keyof RequestLogView)[] = ['id', 'created_at', 'trace_id', 'key_id', 'model', 'channel', 'endpoint', 'route', 'status', 'latency_ms', 'input_units', 'output_units', 'cost_usd', 'request_body', 'response_body'];
const CSV_NUMERIC = new Set<keyof RequestLogView>(['id', 'status', 'latency_ms', 'input_units', 'output_units', 'cost_usd']);
const TRACE_ID = /^[0-9a-f]{32}$/;

export class RequestLogAdmin {
  constructor(
    private readonly repo: RequestLogsRepo,
    private readonly usage: Pick<UsageAdmin, 'filter'>,
  ) {}

  /** The usage ledger's filters (key, model, status, from, to) and trace_id. */
  filter(q: Query): RequestLogFilter {
    const traceId = str(q, 'trace_id', 32);
    if (traceId !== undefined && !TRACE_ID.test(traceId)) throw adminErrors.invalid('trace_id must be 32 lowercase hex characters (a W3C trace id)');
    return { ...this.usage.filter(q), traceId };
  }

  async page(q: Query): Promise<{ data: RequestLogView[]; next_cursor: string | null }> {
    const f = this.filter(q);
    const limit = int(q, 'limit', 1, 1000, 100);
    const c = decodeCursor(str(q, 'cursor', 512), ['number', 'number']);
    const rows = await this.repo.page(f, limit + 1, c && { createdAt: c[0], id: c[1] });
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return { data: page.map(view), next_cursor: rows.length > limit && last ? encodeCursor(last.created_at, last.id) : null };
  }

  /** Every row the filter matches as CSV lines, read a batch at a time. */
  csv(q: Query, batch = 1000): AsyncGenerator<string> {
    const f = this.filter(q);
    return csvPages((n, after) => this.repo.page(f, n, after), view, CSV_COLUMNS, CSV_NUMERIC, batch);
  }
}

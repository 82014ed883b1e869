import type { UsageRepo, UsageTotal } from '../store/repos/usage.js';
import type { UsageCursor, UsageFilter, UsageGroup, UsageGroupTotal, UsageReportsRepo, UsageRow } from '../store/repos/usage-reports.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import { csvLine } from './csv.js';
import { adminErrors } from './errors.js';
import { usd } from './money.js';
import { int, oneOf, str, time, type Query } from './query.js';

// The usage ledger for operators: filtered pages, grouped totals and a CSV export (the admin API),
// totals per key and model (`mediagate usage`).

export interface UsageView {
  id: number;
  created_at: string;
  key_id: string;
  model: string;
  channel: string;
  endpoint: string;
  status: number;
  input_units: number;
  output_units: number;
  cost_usd: string;
  latency_ms: number;
  /** How the cost was reached: unit, quantity, rate and the price factors applied ('' for rows that cost nothing). */
  billed_by: string;
}

export const GROUPS = ['key', 'model', 'hour', 'day'] as const;

function view(r: UsageRow): UsageView {
  return {
    id: r.id,
    created_at: new Date(r.created_at).toISOString(),
    key_id: r.key_id,
    model: r.model,
    channel: r.channel,
    endpoint: r.endpoint,
    status: r.status,
    input_units: r.input_units,
    output_units: r.output_units,
    cost_usd: usd(r.cost_micros),
    latency_ms: r.latency_ms,
    billed_by: r.billed_by ?? '',
  };
}

const CSV_COLUMNS: (keyof UsageView)[] = ['id', 'created_at', 'key_id', 'model', 'channel', 'endpoint', 'status', 'input_units', 'output_units', 'cost_usd', 'latency_ms'];
/** Columns the gateway fills with numbers; the others can carry text a client sent (a model name). */
const CSV_NUMERIC = new Set<keyof UsageView>(['id', 'status', 'input_units', 'output_units', 'cost_usd', 'latency_ms']);

export class UsageAdmin {
  constructor(
    private readonly reports: UsageReportsRepo,
    private readonly usage: UsageRepo,
  ) {}

  /** key, model, status (`429` or a class `4xx`), from, to. */
  filter(q: Query): UsageFilter {
    const f: UsageFilter = { keyId: str(q, 'key'), model: str(q, 'model'), fromMs: time(q, 'from'), toMs: time(q, 'to') };
    const status = str(q, 'status', 3);
    if (status !== undefined) {
      if (/^[1-5]\d\d$/.test(status)) f.status = Number(status);
      else if (/^[2-5]xx$/.test(status)) f.statusClass = Number(status[0]) as 2 | 3 | 4 | 5;
      else throw adminErrors.invalid('status must be an HTTP status (e.g. 429) or a class (2xx, 4xx, 5xx)');
    }
    return f;
  }

  async page(q: Query): Promise<{ data: UsageView[]; next_cursor: string | null }> {
    const f = this.filter(q);
    const limit = int(q, 'limit', 1, 1000, 100);
    const cursor = str(q, 'cursor', 512);
    const c = decodeCursor(cursor, ['number', 'number']);
    const after: UsageCursor | undefined = c && { createdAt: c[0], id: c[1] };
    const rows = await this.reports.page(f, limit + 1, after);
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return { data: page.map(view), next_cursor: rows.length > limit && last ? encodeCursor(last.created_at, last.id) : null };
  }

  async grouped(q: Query, by: UsageGroup): Promise<{ group_by: UsageGroup; data: (Omit<UsageGroupTotal, 'cost_micros'> & { cost_usd: string })[] }> {
    const rows = await this.reports.grouped(this.filter(q), by, int(q, 'limit', 1, 10000, 1000));
    return {
      group_by: by,
      data: rows.map(({ cost_micros, ...r }) => ({ ...r, group: typeof r.group === 'number' ? new Date(r.group).toISOString() : r.group, cost_usd: usd(cost_micros) })),
    };
  }

  /** Every row the filter matches as CSV lines, read from the database a batch at a time. */
  async *csv(q: Query, batch = 2000): AsyncGenerator<string> {
    const f = this.filter(q);
    yield CSV_COLUMNS.join(',') + '\n';
    let after: UsageCursor | undefined;
    for (;;) {
      const rows = await this.reports.page(f, batch, after);
      if (!rows.length) return;
      yield rows.map((r) => csvLine(view(r), CSV_COLUMNS, CSV_NUMERIC)).join('\n') + '\n';
      const last = rows[rows.length - 1];
      after = { createdAt: last.created_at, id: last.id };
      if (rows.length < batch) return;
    }
  }

  totals(filter: { keyId?: string; sinceMs?: number }): Promise<UsageTotal[]> {
    return this.usage.totals(filter);
  }
}

export function groupOf(q: Query): UsageGroup | undefined {
  return oneOf(q, 'group_by', GROUPS);
}

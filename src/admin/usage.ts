import type { UsageRepo, UsageTotal } from '../store/repos/usage.js';
import { SERIES_COLUMNS, type SeriesGroup, type UsageCursor, type UsageFilter, type UsageGroup, type UsageGroupTotal, type UsageReportsRepo, type UsageRow } from '../store/repos/usage-reports.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import { csvPages } from './csv.js';
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
  /** The message the client was answered with when the request failed or was refused; '' otherwise. */
  error: string;
}

export const GROUPS = ['key', 'model', 'hour', 'day'] as const;

export const SERIES_BUCKETS = { hour: 3_600_000, day: 86_400_000 } as const;
/** At most this many buckets in one series (1,000 hours is about six weeks). */
export const MAX_BUCKETS = 1000;
/** The groups that spent most get a series each; the rest are summed into one named `other`. */
export const MAX_SERIES = 8;

export interface UsageSeries {
  group: SeriesGroup;
  bucket: keyof typeof SERIES_BUCKETS;
  from: string;
  to: string;
  /** Start of each bucket, Unix ms, oldest first. */
  t: number[];
  /** Largest spend first; `other` (the rest together) last when there are more than MAX_SERIES groups. */
  series: { name: string; other: boolean; cost_usd: number[]; requests: number[]; total_usd: string; total_requests: number }[];
}

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
    error: r.error,
  };
}

const CSV_COLUMNS: (keyof UsageView)[] = ['id', 'created_at', 'key_id', 'model', 'channel', 'endpoint', 'status', 'input_units', 'output_units', 'cost_usd', 'billed_by', 'latency_ms', 'error'];
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

  /**
   * Spend and requests per key or model per hour or day over [from, to): by default the last day
   * by hour (or the last 30 days by day). Buckets start on whole UTC hours and days.
   */
  async series(q: Query, now = Date.now()): Promise<UsageSeries> {
    const group = oneOf(q, 'group', Object.keys(SERIES_COLUMNS) as SeriesGroup[]) ?? 'model';
    const bucket = oneOf(q, 'bucket', Object.keys(SERIES_BUCKETS) as (keyof typeof SERIES_BUCKETS)[]) ?? 'hour';
    const size = SERIES_BUCKETS[bucket];
    const f = this.filter(q);
    const to = f.toMs ?? now;
    const from = f.fromMs ?? to - (bucket === 'hour' ? 24 : 30) * SERIES_BUCKETS[bucket];
    if (from >= to) throw adminErrors.invalid('from must be earlier than to');
    const first = Math.floor(from / size) * size;
    const n = Math.ceil((to - first) / size);
    if (n > MAX_BUCKETS) {
      throw adminErrors.invalid(`a series has at most ${MAX_BUCKETS} buckets: by hour a range of up to ${Math.floor(MAX_BUCKETS / 24)} days, by day up to ${MAX_BUCKETS} days (asked: ${n} ${bucket}s)`);
    }
    const cells = await this.reports.series({ ...f, fromMs: from, toMs: to }, group, size);
    const byGroup = new Map<string, { cost: number[]; requests: number[]; total: number; count: number }>();
    for (const c of cells) {
      const i = Math.floor((c.bucket - first) / size);
      if (i < 0 || i >= n) continue;
      let s = byGroup.get(c.group);
      if (!s) byGroup.set(c.group, (s = { cost: new Array<number>(n).fill(0), requests: new Array<number>(n).fill(0), total: 0, count: 0 }));
      s.cost[i] += c.cost_micros;
      s.requests[i] += c.requests;
      s.total += c.cost_micros;
      s.count += c.requests;
    }
    const ranked = [...byGroup.entries()].sort((a, b) => b[1].total - a[1].total || b[1].count - a[1].count || a[0].localeCompare(b[0]));
    const shown = ranked.length > MAX_SERIES ? ranked.slice(0, MAX_SERIES - 1) : ranked;
    const rest = ranked.slice(shown.length);
    const out = (name: string, other: boolean, s: { cost: number[]; requests: number[]; total: number; count: number }) => ({
      name,
      other,
      cost_usd: s.cost.map((m) => m / 1_000_000),
      requests: s.requests,
      total_usd: usd(s.total),
      total_requests: s.count,
    });
    const series = shown.map(([name, s]) => out(name, false, s));
    if (rest.length) {
      const sum = { cost: new Array<number>(n).fill(0), requests: new Array<number>(n).fill(0), total: 0, count: 0 };
      for (const [, s] of rest) {
        for (let i = 0; i < n; i++) {
          sum.cost[i] += s.cost[i];
          sum.requests[i] += s.requests[i];
        }
        sum.total += s.total;
        sum.count += s.count;
      }
      series.push(out(`${rest.length} more`, true, sum));
    }
    return { group, bucket, from: new Date(from).toISOString(), to: new Date(to).toISOString(), t: Array.from({ length: n }, (_, i) => first + i * size), series };
  }

  /** Every row the filter matches as CSV lines, read from the database a batch at a time. */
  csv(q: Query, batch = 2000): AsyncGenerator<string> {
    const f = this.filter(q);
    return csvPages((n, after) => this.reports.page(f, n, after), view, CSV_COLUMNS, CSV_NUMERIC, batch);
  }

  totals(filter: { keyId?: string; sinceMs?: number }): Promise<UsageTotal[]> {
    return this.usage.totals(filter);
  }
}

export function groupOf(q: Query): UsageGroup | undefined {
  return oneOf(q, 'group_by', GROUPS);
}

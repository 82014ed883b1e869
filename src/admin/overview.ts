import { LATENCY_BOUNDS, type UsageReportsRepo } from '../store/repos/usage-reports.js';
import type { TaskReportsRepo } from '../store/repos/task-reports.js';
import { usd } from './money.js';

// The console's overview, aggregated in the database: requests, errors by status, spend and
// latency per time bucket, spend by model, and open video tasks, over the last hour, day or week.
// A video task's create is one request; the ledger row written when the task ends adds its cost
// and its duration (charted apart from HTTP latency), not a second request.
// Latency percentiles come from counts per latency class, so each is the upper edge of its class
// (5, 10, 25, 50, 100, 250, 500 ms, 1, 2.5, 5, 10, 30, 60, 300 s).

export const RANGES = { hour: { ms: 3_600_000, bucketMs: 60_000 }, day: { ms: 86_400_000, bucketMs: 900_000 }, week: { ms: 7 * 86_400_000, bucketMs: 7_200_000 } } as const;
export type Range = keyof typeof RANGES;

export interface Overview {
  range: Range;
  bucket_s: number;
  /** Start of each bucket, Unix ms, oldest first. */
  t: number[];
  requests: number[];
  /** Per HTTP status ≥ 400: requests per bucket. */
  errors: Record<string, number[]>;
  spend_usd: number[];
  p50_ms: (number | null)[];
  p99_ms: (number | null)[];
  /** Video tasks that ended in each bucket, and their durations (submit to end), kept apart from HTTP latency. */
  tasks_ended: number[];
  task_p50_s: (number | null)[];
  task_p99_s: (number | null)[];
  open_tasks: number[];
  spend_by_model: { model: string; requests: number; cost_usd: string }[];
  totals: { requests: number; errors: number; cost_usd: string; open_tasks: number };
}

function percentile(hist: number[], q: number): number | null {
  const total = hist.reduce((a, b) => a + b, 0);
  if (!total) return null;
  const rank = Math.ceil(q * total);
  let seen = 0;
  for (let i = 0; i < hist.length; i++) {
    seen += hist[i];
    if (seen >= rank) return LATENCY_BOUNDS[Math.min(i, LATENCY_BOUNDS.length - 2)];
  }
  return null;
}

const seconds = (ms: number | null) => (ms === null ? null : ms / 1000);

export async function overview(usage: UsageReportsRepo, tasks: TaskReportsRepo, range: Range, now = Date.now()): Promise<Overview> {
  const { ms, bucketMs } = RANGES[range];
  const first = Math.floor((now - ms) / bucketMs) * bucketMs + bucketMs;
  const n = Math.round(ms / bucketMs);
  const t = Array.from({ length: n }, (_, i) => first + i * bucketMs);
  const index = (bucket: number) => Math.round((bucket - first) / bucketMs);
  const [cells, byModel, open] = await Promise.all([usage.buckets(first, bucketMs), usage.spendByModel(first), tasks.openSeries(Math.floor(first / 1000), bucketMs / 1000)]);

  const requests = new Array<number>(n).fill(0);
  const cost = new Array<number>(n).fill(0);
  const errors: Record<string, number[]> = {};
  const hists = Array.from({ length: n }, () => new Array<number>(LATENCY_BOUNDS.length).fill(0));
  const ended = new Array<number>(n).fill(0);
  const taskHists = Array.from({ length: n }, () => new Array<number>(LATENCY_BOUNDS.length).fill(0));
  let errorTotal = 0;
  for (const c of cells) {
    const i = index(c.bucket);
    if (i < 0 || i >= n) continue;
    cost[i] += c.cost_micros;
    // A video task's closing row: its create was counted as a request already.
    if (c.task) {
      ended[i] += c.requests;
      taskHists[i][c.latencyClass] += c.requests;
      continue;
    }
    requests[i] += c.requests;
    hists[i][c.latencyClass] += c.requests;
    if (c.status >= 400) {
      (errors[c.status] ??= new Array<number>(n).fill(0))[i] += c.requests;
      errorTotal += c.requests;
    }
  }
  // Open tasks at the end of each bucket, walking back from the count open now.
  const openTasks = new Array<number>(n).fill(0);
  let running = open.openNow;
  for (let i = n - 1; i >= 0; i--) {
    openTasks[i] = Math.max(0, running);
    const s = t[i] / 1000;
    running = running - (open.submitted.get(s) ?? 0) + (open.finished.get(s) ?? 0);
  }
  return {
    range,
    bucket_s: bucketMs / 1000,
    t,
    requests,
    errors,
    spend_usd: cost.map((m) => m / 1_000_000),
    p50_ms: hists.map((h) => percentile(h, 0.5)),
    p99_ms: hists.map((h) => percentile(h, 0.99)),
    tasks_ended: ended,
    task_p50_s: taskHists.map((h) => seconds(percentile(h, 0.5))),
    task_p99_s: taskHists.map((h) => seconds(percentile(h, 0.99))),
    open_tasks: openTasks,
    spend_by_model: byModel.map((m) => ({ model: m.model, requests: m.requests, cost_usd: usd(m.cost_micros) })),
    totals: { requests: requests.reduce((a, b) => a + b, 0), errors: errorTotal, cost_usd: usd(cost.reduce((a, b) => a + b, 0)), open_tasks: open.openNow },
  };
}

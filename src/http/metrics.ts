import { Counter, Registry, collectDefaultMetrics, type Metric } from 'prom-client';

/** Upper bounds (seconds) of the request latency histogram's buckets. */
const LATENCY_BUCKETS: readonly number[] = Object.freeze([0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30, 120]);

/** One (route, method, status) series of the request counter. */
interface RequestCell {
  readonly labels: { route: string; method: string; status: string };
  value: number;
}

/** Everything kept for one route pattern: its latency histogram and its request counts. */
interface RouteEntry {
  readonly route: string;
  /** method → status → counter series. */
  readonly cells: Map<string, Map<number, RequestCell>>;
  /** Observations per bucket, not cumulative; the last slot holds those above the largest bound. */
  readonly buckets: Float64Array;
  sum: number;
  count: number;
  /** Whether the histogram series exists yet (prom-client creates it on the first valid observation). */
  listed: boolean;
}

/**
 * What prom-client's Registry reads from a metric: it calls get() (and getForPromString() when
 * present) for /metrics and getMetricsAsJSON(), and reset() from resetMetrics().
 */
interface RegistryMetric {
  name: string;
  readonly help: string;
  readonly type: 'counter' | 'histogram';
  readonly aggregator: 'sum';
  get(): Promise<{ name: string; help: string; type: string; values: object[]; aggregator: string }>;
  reset(): void;
}

/**
 * Prometheus metrics of one process: requests by route and status, their latency, upstream
 * failures by channel and kind, and Node's default process metrics. Each gateway instance has
 * its own registry (tests build several apps in one process).
 *
 * The two per-request metrics are kept in plain counters and exposed to the registry as metric
 * objects of their own: prom-client's labelled children convert, validate and hash their label
 * object on every call, a visible share of a cheap request such as GET /v1/models. The
 * exposition (names, HELP, TYPE, label order, series order, values, `le` bounds and "+Inf",
 * _sum and _count) is the one prom-client's Counter and Histogram print for the same requests.
 */
export class Metrics {
  readonly registry = new Registry();
  readonly upstreamFailures: Counter<'channel' | 'kind'>;

  private routes = new Map<string, RouteEntry>();
  /** Counter series in the order they first appeared. */
  private requestCells: RequestCell[] = [];
  /** Histogram series in the order they first appeared. */
  private latencyRoutes: RouteEntry[] = [];

  constructor(defaults = true) {
    if (defaults) collectDefaultMetrics({ register: this.registry, prefix: 'mediagate_' });
    this.registry.registerMetric(this.requestsMetric() as unknown as Metric);
    this.registry.registerMetric(this.latencyMetric() as unknown as Metric);
    this.upstreamFailures = new Counter({
      name: 'mediagate_upstream_failures_total',
      help: 'Failed upstream attempts, by channel and failure kind',
      labelNames: ['channel', 'kind'],
      registers: [this.registry],
    });
  }

  /** One answered request (route pattern, never the raw URL, so labels stay bounded). */
  observe(route: string, method: string, status: number, seconds: number): void {
    let entry = this.routes.get(route);
    if (!entry) {
      entry = { route, cells: new Map(), buckets: new Float64Array(LATENCY_BUCKETS.length + 1), sum: 0, count: 0, listed: false };
      this.routes.set(route, entry);
    }
    let byStatus = entry.cells.get(method);
    if (!byStatus) entry.cells.set(method, (byStatus = new Map()));
    let cell = byStatus.get(status);
    if (!cell) {
      cell = { labels: { route, method, status: String(status) }, value: 0 };
      byStatus.set(status, cell);
      this.requestCells.push(cell);
    }
    cell.value += 1;
    // prom-client refuses a value that is not a finite number; the request still counts above.
    if (!Number.isFinite(seconds)) return;
    let i = 0;
    while (i < LATENCY_BUCKETS.length && seconds > LATENCY_BUCKETS[i]!) i++;
    entry.buckets[i]! += 1;
    entry.sum += seconds;
    entry.count += 1;
    if (!entry.listed) {
      entry.listed = true;
      this.latencyRoutes.push(entry);
    }
  }

  /** The Prometheus exposition (GET /metrics): its content type and text. */
  async exposition(): Promise<{ contentType: string; text: string }> {
    return { contentType: this.registry.contentType, text: await this.registry.metrics() };
  }

  /** Forgets the request counts (the registry's resetMetrics() asks this of each metric). */
  private resetRequests(): void {
    for (const e of this.routes.values()) e.cells.clear();
    this.requestCells = [];
  }

  /** Forgets the latency observations. */
  private resetLatency(): void {
    for (const e of this.latencyRoutes) {
      e.buckets.fill(0);
      e.sum = 0;
      e.count = 0;
      e.listed = false;
    }
    this.latencyRoutes = [];
  }

  /** mediagate_http_requests_total, shaped as prom-client's Counter reports it. */
  private requestsMetric(): RegistryMetric {
    const metric: RegistryMetric = {
      name: 'mediagate_http_requests_total',
      help: 'HTTP requests answered, by route pattern, method and status',
      type: 'counter',
      aggregator: 'sum',
      get: async () => ({
        help: metric.help,
        name: metric.name,
        type: metric.type,
        values: this.requestCells.map((c) => ({ value: c.value, labels: { ...c.labels } })),
        aggregator: metric.aggregator,
      }),
      reset: () => this.resetRequests(),
    };
    return metric;
  }

  /** mediagate_http_request_duration_seconds, shaped as prom-client's Histogram reports it. */
  private latencyMetric(): RegistryMetric {
    const metric: RegistryMetric = {
      name: 'mediagate_http_request_duration_seconds',
      help: 'Time from request to response end, by route pattern',
      type: 'histogram',
      aggregator: 'sum',
      get: async () => {
        const { name } = metric;
        const bucket = `${name}_bucket`;
        const values: object[] = [];
        for (const e of this.latencyRoutes) {
          let acc = 0;
          for (let i = 0; i < LATENCY_BUCKETS.length; i++) {
            acc += e.buckets[i]!;
            values.push({ value: acc, metricName: bucket, exemplar: null, labels: { le: LATENCY_BUCKETS[i], route: e.route } });
          }
          values.push({ value: e.count, metricName: bucket, exemplar: null, labels: { le: '+Inf', route: e.route } });
          values.push({ value: e.sum, metricName: `${name}_sum`, exemplar: undefined, labels: { route: e.route } });
          values.push({ value: e.count, metricName: `${name}_count`, exemplar: undefined, labels: { route: e.route } });
        }
        return { name, help: metric.help, type: metric.type, values, aggregator: metric.aggregator };
      },
      reset: () => this.resetLatency(),
    };
    return metric;
  }
}

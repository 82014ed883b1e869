import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { FastifyInstance } from 'fastify';

/**
 * Prometheus metrics of one process: requests by route and status, their latency, upstream
 * failures by channel and kind, and Node's default process metrics. Each gateway instance has
 * its own registry (tests build several apps in one process).
 */
export class Metrics {
  readonly registry = new Registry();
  readonly requests: Counter<'route' | 'method' | 'status'>;
  readonly latency: Histogram<'route'>;
  readonly upstreamFailures: Counter<'channel' | 'kind'>;

  constructor(defaults = true) {
    if (defaults) collectDefaultMetrics({ register: this.registry, prefix: 'mediagate_' });
    this.requests = new Counter({
      name: 'mediagate_http_requests_total',
      help: 'HTTP requests answered, by route pattern, method and status',
      labelNames: ['route', 'method', 'status'],
      registers: [this.registry],
    });
    this.latency = new Histogram({
      name: 'mediagate_http_request_duration_seconds',
      help: 'Time from request to response end, by route pattern',
      labelNames: ['route'],
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30, 120],
      registers: [this.registry],
    });
    this.upstreamFailures = new Counter({
      name: 'mediagate_upstream_failures_total',
      help: 'Failed upstream attempts, by channel and failure kind',
      labelNames: ['channel', 'kind'],
      registers: [this.registry],
    });
  }

  // The labelled children are kept per (route, method, status): prom-client would otherwise hash
  // the label object on every request.
  private readonly counters = new Map<string, Counter.Internal>();
  private readonly timers = new Map<string, Histogram.Internal<'route'>>();

  /** One answered request (route pattern, never the raw URL, so labels stay bounded). */
  observe(route: string, method: string, status: number, seconds: number): void {
    const id = `${status} ${method} ${route}`;
    let counter = this.counters.get(id);
    if (!counter) this.counters.set(id, (counter = this.requests.labels({ route, method, status: String(status) })));
    counter.inc();
    let timer = this.timers.get(route);
    if (!timer) this.timers.set(route, (timer = this.latency.labels({ route })));
    timer.observe(seconds);
  }

  /** Counts every request Fastify answered, and serves /metrics. */
  instrument(app: FastifyInstance): void {
    app.addHook('onResponse', (request, reply, done) => {
      this.observe(request.routeOptions.url ?? 'unmatched', request.method, reply.statusCode, reply.elapsedTime / 1000);
      done();
    });
    app.get('/metrics', async (_req, reply) => {
      reply.header('content-type', this.registry.contentType);
      return this.registry.metrics();
    });
  }
}

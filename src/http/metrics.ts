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

  /** Counts every answered request (route pattern, never the raw URL, so labels stay bounded). */
  instrument(app: FastifyInstance): void {
    // The labelled children are kept per (route, method, status): prom-client would otherwise hash
    // the label object on every request.
    const counters = new Map<string, Counter.Internal>();
    const timers = new Map<string, Histogram.Internal<'route'>>();
    app.addHook('onResponse', (request, reply, done) => {
      const route = request.routeOptions.url ?? 'unmatched';
      const id = `${reply.statusCode} ${request.method} ${route}`;
      let counter = counters.get(id);
      if (!counter) counters.set(id, (counter = this.requests.labels({ route, method: request.method, status: String(reply.statusCode) })));
      counter.inc();
      let timer = timers.get(route);
      if (!timer) timers.set(route, (timer = this.latency.labels({ route })));
      timer.observe(reply.elapsedTime / 1000);
      done();
    });
    app.get('/metrics', async (_req, reply) => {
      reply.header('content-type', this.registry.contentType);
      return this.registry.metrics();
    });
  }
}

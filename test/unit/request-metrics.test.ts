import { describe, expect, it } from 'vitest';
import { Counter, Histogram, Registry } from 'prom-client';
import { Metrics } from '../../src/http/metrics.js';

type Obs = [route: string, method: string, status: number, seconds: number];

/** The same two metrics kept by prom-client's own Counter and Histogram: what /metrics must print. */
function reference(observations: Obs[]): Registry {
  const registry = new Registry();
  const requests = new Counter({
    name: 'mediagate_http_requests_total',
    help: 'HTTP requests answered, by route pattern, method and status',
    labelNames: ['route', 'method', 'status'],
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'mediagate_http_request_duration_seconds',
    help: 'Time from request to response end, by route pattern',
    labelNames: ['route'],
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30, 120],
    registers: [registry],
  });
  new Counter({
    name: 'mediagate_upstream_failures_total',
    help: 'Failed upstream attempts, by channel and failure kind',
    labelNames: ['channel', 'kind'],
    registers: [registry],
  });
  for (const [route, method, status, seconds] of observations) {
    requests.inc({ route, method, status: String(status) });
    latency.observe({ route }, seconds);
  }
  return registry;
}

function ours(observations: Obs[]): Metrics {
  const m = new Metrics(false);
  for (const o of observations) m.observe(...o);
  return m;
}

const known: Obs[] = [
  ['/v1/models', 'GET', 200, 0.0004],
  ['/v1/models', 'GET', 200, 0.005], // exactly on a bound: counts in le="0.005"
  ['/v1/models', 'GET', 401, 0.0005],
  ['/v1/chat/completions', 'POST', 200, 0.25],
  ['/v1/chat/completions', 'POST', 502, 130], // above the largest bound: only +Inf
  ['/v1/chat/completions', 'POST', 200, 120], // exactly the largest bound
  ['/v1/models', 'GET', 200, 0],
];

describe('request metrics', () => {
  it('prints the exact exposition lines for a known set of requests', async () => {
    const text = await ours(known).registry.metrics();
    const modelsSum = 0.0004 + 0.005 + 0.0005 + 0;
    const chatSum = 0.25 + 130 + 120;
    expect(text).toBe(
      [
        '# HELP mediagate_http_requests_total HTTP requests answered, by route pattern, method and status',
        '# TYPE mediagate_http_requests_total counter',
        'mediagate_http_requests_total{route="/v1/models",method="GET",status="200"} 3',
        'mediagate_http_requests_total{route="/v1/models",method="GET",status="401"} 1',
        'mediagate_http_requests_total{route="/v1/chat/completions",method="POST",status="200"} 2',
        'mediagate_http_requests_total{route="/v1/chat/completions",method="POST",status="502"} 1',
        '',
        '# HELP mediagate_http_request_duration_seconds Time from request to response end, by route pattern',
        '# TYPE mediagate_http_request_duration_seconds histogram',
        'mediagate_http_request_duration_seconds_bucket{le="0.001",route="/v1/models"} 3',
        'mediagate_http_request_duration_seconds_bucket{le="0.005",route="/v1/models"} 4',
        'mediagate_http_request_duration_seconds_bucket{le="0.01",route="/v1/models"} 4',
        'mediagate_http_request_duration_seconds_bucket{le="0.05",route="/v1/models"} 4',
        'mediagate_http_request_duration_seconds_bucket{le="0.1",route="/v1/models"} 4',
        'mediagate_http_request_duration_seconds_bucket{le="0.5",route="/v1/models"} 4',
        'mediagate_http_request_duration_seconds_bucket{le="1",route="/v1/models"} 4',
        'mediagate_http_request_duration_seconds_bucket{le="5",route="/v1/models"} 4',
        'mediagate_http_request_duration_seconds_bucket{le="30",route="/v1/models"} 4',
        'mediagate_http_request_duration_seconds_bucket{le="120",route="/v1/models"} 4',
        'mediagate_http_request_duration_seconds_bucket{le="+Inf",route="/v1/models"} 4',
        `mediagate_http_request_duration_seconds_sum{route="/v1/models"} ${modelsSum}`,
        'mediagate_http_request_duration_seconds_count{route="/v1/models"} 4',
        'mediagate_http_request_duration_seconds_bucket{le="0.001",route="/v1/chat/completions"} 0',
        'mediagate_http_request_duration_seconds_bucket{le="0.005",route="/v1/chat/completions"} 0',
        'mediagate_http_request_duration_seconds_bucket{le="0.01",route="/v1/chat/completions"} 0',
        'mediagate_http_request_duration_seconds_bucket{le="0.05",route="/v1/chat/completions"} 0',
        'mediagate_http_request_duration_seconds_bucket{le="0.1",route="/v1/chat/completions"} 0',
        'mediagate_http_request_duration_seconds_bucket{le="0.5",route="/v1/chat/completions"} 1',
        'mediagate_http_request_duration_seconds_bucket{le="1",route="/v1/chat/completions"} 1',
        'mediagate_http_request_duration_seconds_bucket{le="5",route="/v1/chat/completions"} 1',
        'mediagate_http_request_duration_seconds_bucket{le="30",route="/v1/chat/completions"} 1',
        'mediagate_http_request_duration_seconds_bucket{le="120",route="/v1/chat/completions"} 2',
        'mediagate_http_request_duration_seconds_bucket{le="+Inf",route="/v1/chat/completions"} 3',
        `mediagate_http_request_duration_seconds_sum{route="/v1/chat/completions"} ${chatSum}`,
        'mediagate_http_request_duration_seconds_count{route="/v1/chat/completions"} 3',
        '',
        '# HELP mediagate_upstream_failures_total Failed upstream attempts, by channel and failure kind',
        '# TYPE mediagate_upstream_failures_total counter',
        '',
      ].join('\n'),
    );
    expect(text).toBe(await reference(known).metrics());
  });

  it("prints and reports what prom-client's Counter and Histogram do for the same traffic", async () => {
    // A deterministic mix of routes, methods, statuses and durations (including every bound,
    // values just either side of one, and values above the largest).
    const routes = ['/v1/models', '/v1/chat/completions', '/v1/video/generations/:task_id', 'unmatched', '/a "quoted"\\route'];
    const bounds = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30, 120];
    const obs: Obs[] = [];
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    for (let i = 0; i < 2000; i++) {
      const route = routes[Math.floor(next() * routes.length)]!;
      const method = next() < 0.7 ? 'GET' : 'POST';
      const status = [200, 200, 200, 400, 401, 404, 429, 502][Math.floor(next() * 8)]!;
      const pick = next();
      const b = bounds[Math.floor(next() * bounds.length)]!;
      const seconds = pick < 0.2 ? b : pick < 0.3 ? b * (1 + 1e-12) : pick < 0.35 ? 200 + next() * 100 : next() * next() * 2;
      obs.push([route, method, status, seconds]);
    }
    const m = ours(obs);
    const ref = reference(obs);
    expect(await m.registry.metrics()).toBe(await ref.metrics());
    expect(await m.registry.getMetricsAsJSON()).toStrictEqual(await ref.getMetricsAsJSON());
  });

  it('keeps counting after the registry resets its metrics, as prom-client does', async () => {
    const m = ours(known);
    const ref = reference(known);
    m.registry.resetMetrics();
    ref.resetMetrics();
    expect(await m.registry.metrics()).toBe(await ref.metrics());
    const after: Obs[] = [['/v1/chat/completions', 'POST', 200, 0.02], ['/v1/models', 'GET', 200, 0.002]];
    for (const o of after) m.observe(...o);
    const again = reference(after);
    expect(await m.registry.metrics()).toBe(await again.metrics());
    expect(await m.registry.metrics()).toContain('mediagate_http_requests_total{route="/v1/chat/completions",method="POST",status="200"} 1');
  });

  it('counts a request whose duration is not a number without adding it to the latency histogram', async () => {
    const m = new Metrics(false);
    m.observe('/v1/models', 'GET', 200, Number.NaN);
    const text = await m.registry.metrics();
    expect(text).toContain('mediagate_http_requests_total{route="/v1/models",method="GET",status="200"} 1');
    expect(text).not.toContain('mediagate_http_request_duration_seconds_count');
    m.observe('/v1/models', 'GET', 200, 0.003);
    expect(await m.registry.metrics()).toContain('mediagate_http_request_duration_seconds_count{route="/v1/models"} 1');
  });

  it('keeps the default process metrics and the upstream failure counter in the same registry', async () => {
    const m = new Metrics();
    m.upstreamFailures.inc({ channel: 'ark', kind: 'timeout' });
    m.observe('/v1/models', 'GET', 200, 0.001);
    const text = await m.registry.metrics();
    expect(text).toContain('mediagate_upstream_failures_total{channel="ark",kind="timeout"} 1');
    expect(text).toContain('# TYPE mediagate_process_cpu_seconds_total counter');
    expect(text).toContain('mediagate_http_request_duration_seconds_bucket{le="0.001",route="/v1/models"} 1');
  });
});

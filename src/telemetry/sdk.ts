import { ValueType, metrics, trace, type HrTime } from '@opentelemetry/api';
import { emptyResource, resourceFromAttributes } from '@opentelemetry/resources';
import { AlwaysOffSampler, AlwaysOnSampler, BasicTracerProvider, BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler, type Sampler, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { AggregationTemporality, DataPointType, MeterProvider, PeriodicExportingMetricReader, type CollectionResult, type MetricData, type MetricProducer, type PushMetricExporter } from '@opentelemetry/sdk-metrics';
import type { Config } from '../config/schema.js';
import { ids, setTracer } from './trace.js';
import { operationDuration, setMetrics, tokenUsage, type GenAiHistogram } from './meter.js';

// The OpenTelemetry SDK, loaded by src/telemetry/index.ts only when telemetry is on. OpenTelemetry's
// standard environment variables win over the `telemetry` config section (docs/observability.md).

export type Settings = Config['telemetry'];

/** What a running SDK needs to stop: flushes what is buffered, then forgets the global providers. */
export interface RunningTelemetry {
  shutdown(): Promise<void>;
}

type Env = Record<string, string | undefined>;
type Protocol = 'http/protobuf' | 'http/json';

/** The sampler OTEL_TRACES_SAMPLER (+ _ARG) names, else the config's. */
export function samplerFrom(settings: Settings, env: Env = process.env): Sampler {
  const name = env.OTEL_TRACES_SAMPLER?.trim() || settings.sampler;
  const argText = env.OTEL_TRACES_SAMPLER_ARG?.trim();
  const arg = argText && Number.isFinite(Number(argText)) ? Math.min(1, Math.max(0, Number(argText))) : settings.sampler_arg;
  const ratio = () => new TraceIdRatioBasedSampler(arg);
  switch (name) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return ratio();
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: ratio() });
    default:
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

/** The OTLP protocol for a signal: its own variable, the general one, else the config's. */
export function protocolFor(signal: 'TRACES' | 'METRICS', settings: Settings, env: Env = process.env): Protocol {
  const value = (env[`OTEL_EXPORTER_OTLP_${signal}_PROTOCOL`] ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? '').trim();
  if (value === 'http/json' || value === 'http/protobuf') return value;
  return settings.protocol;
}

/**
 * The URL a signal is sent to when no OTEL_EXPORTER_OTLP_*ENDPOINT variable is set (the exporter
 * reads those itself): the config's endpoint plus the signal's path; undefined: the exporter's default.
 */
function urlFor(signal: 'TRACES' | 'METRICS', settings: Settings, env: Env): string | undefined {
  if (env[`OTEL_EXPORTER_OTLP_${signal}_ENDPOINT`] || env.OTEL_EXPORTER_OTLP_ENDPOINT || !settings.endpoint) return undefined;
  return `${settings.endpoint.replace(/\/+$/, '')}/v1/${signal.toLowerCase()}`;
}

async function spanExporter(settings: Settings, env: Env): Promise<SpanExporter> {
  const url = urlFor('TRACES', settings, env);
  const headers = env.OTEL_EXPORTER_OTLP_HEADERS || env.OTEL_EXPORTER_OTLP_TRACES_HEADERS ? undefined : settings.headers;
  if (protocolFor('TRACES', settings, env) === 'http/json') {
    const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
    return new OTLPTraceExporter({ url, headers });
  }
  const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-proto');
  return new OTLPTraceExporter({ url, headers });
}

async function metricExporter(settings: Settings, env: Env): Promise<PushMetricExporter> {
  const url = urlFor('METRICS', settings, env);
  const headers = env.OTEL_EXPORTER_OTLP_HEADERS || env.OTEL_EXPORTER_OTLP_METRICS_HEADERS ? undefined : settings.headers;
  if (protocolFor('METRICS', settings, env) === 'http/json') {
    const { OTLPMetricExporter } = await import('@opentelemetry/exporter-metrics-otlp-http');
    return new OTLPMetricExporter({ url, headers });
  }
  const { OTLPMetricExporter } = await import('@opentelemetry/exporter-metrics-otlp-proto');
  return new OTLPMetricExporter({ url, headers });
}

/** Starts tracing (and metrics, unless `settings.metrics` is false), registered as the global providers. */
export async function startSdk(settings: Settings, producer: MetricProducer | null, env: Env = process.env): Promise<RunningTelemetry> {
  const resource = resourceFromAttributes({
    'service.name': env.OTEL_SERVICE_NAME?.trim() || settings.service_name,
    'service.version': process.env.npm_package_version ?? '0.1.0',
  });
  const sampler = samplerFrom(settings, env);
  const tracer = new BasicTracerProvider({
    resource,
    sampler,
    idGenerator: ids,
    spanProcessors: [new BatchSpanProcessor(await spanExporter(settings, env), { scheduledDelayMillis: settings.export_interval_ms })],
  });
  // No context manager and no global propagator: the gateway carries its trace context on the
  // request (src/telemetry/trace.ts) and writes traceparent headers itself.
  trace.setGlobalTracerProvider(tracer);
  let meter: MeterProvider | null = null;
  if (settings.metrics) {
    const reader = new PeriodicExportingMetricReader({
      exporter: await metricExporter(settings, env),
      exportIntervalMillis: settings.metrics_interval_ms,
      exportTimeoutMillis: Math.min(30_000, settings.metrics_interval_ms),
      metricProducers: producer ? [genAiProducer(), producer] : [genAiProducer()],
    });
    meter = new MeterProvider({ resource, readers: [reader] });
    metrics.setGlobalMeterProvider(meter);
    setMetrics(true);
  }
  setTracer(tracer.getTracer('mediagate'), sampler);
  return {
    async shutdown() {
      setTracer(null);
      setMetrics(false);
      await Promise.allSettled([tracer.shutdown(), meter?.shutdown()]);
      trace.disable();
      metrics.disable();
    },
  };
}

function hrTime(ms: number): HrTime {
  return [Math.floor(ms / 1000), Math.round((ms % 1000) * 1e6)];
}

/** The GenAI histograms (src/telemetry/meter.ts) as cumulative OTLP histograms, read at each export. */
function genAiProducer(): MetricProducer {
  const start = hrTime(Date.now());
  const data = (h: GenAiHistogram, end: HrTime): MetricData => ({
    descriptor: { name: h.name, description: h.description, unit: h.unit, valueType: ValueType.DOUBLE },
    aggregationTemporality: AggregationTemporality.CUMULATIVE,
    dataPointType: DataPointType.HISTOGRAM,
    dataPoints: [...h.series.values()].map((s) => ({
      startTime: start,
      endTime: end,
      attributes: s.attributes,
      value: { buckets: { boundaries: [...h.boundaries], counts: [...s.counts] }, sum: s.sum, count: s.count, min: s.min, max: s.max },
    })),
  });
  return {
    async collect(): Promise<CollectionResult> {
      const end = hrTime(Date.now());
      const metrics = [operationDuration, tokenUsage].filter((h) => h.series.size > 0).map((h) => data(h, end));
      return { resourceMetrics: { resource: emptyResource(), scopeMetrics: [{ scope: { name: 'mediagate' }, metrics }] }, errors: [] };
    },
  };
}

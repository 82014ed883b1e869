import { ValueType, metrics, trace, type HrTime } from '@opentelemetry/api';
import { emptyResource, resourceFromAttributes } from '@opentelemetry/resources';
import { AlwaysOffSampler, AlwaysOnSampler, BasicTracerProvider, BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler, type Sampler, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { AggregationTemporality, DataPointType, MeterProvider, PeriodicExportingMetricReader, type CollectionResult, type MetricData, type MetricProducer, type PushMetricExporter } from '@opentelemetry/sdk-metrics';
import type { Config } from '../config/schema.js';
import { ids, setTracer } from './trace.js';
import type { EncodedSpans } from './otlp-spans.js';
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
/** Told of an environment variable whose value is ignored. */
export type Warn = (message: string) => void;

const SAMPLERS = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'];
const PROTOCOLS: readonly Protocol[] = ['http/protobuf', 'http/json'];

/**
 * An enumerated variable's value, case-insensitive; '' when it is unset or empty, and when it is not
 * one of `allowed`: then it is ignored, as if unset, and `warn` is told (OpenTelemetry's rule for
 * its variables).
 */
function envChoice(env: Env, name: string, allowed: readonly string[], warn?: Warn): string {
  const value = env[name]?.trim().toLowerCase();
  if (!value) return '';
  if (allowed.includes(value)) return value;
  warn?.(`${name}=${JSON.stringify(env[name]!.slice(0, 64))} is ignored: it must be one of ${allowed.join(', ')}`);
  return '';
}

/** The sampler OTEL_TRACES_SAMPLER (+ _ARG) names, else the config's. */
export function samplerFrom(settings: Settings, env: Env = process.env, warn?: Warn): Sampler {
  const name = envChoice(env, 'OTEL_TRACES_SAMPLER', SAMPLERS, warn) || settings.sampler;
  const argText = env.OTEL_TRACES_SAMPLER_ARG?.trim();
  let arg = settings.sampler_arg;
  if (argText && Number.isFinite(Number(argText))) arg = Math.min(1, Math.max(0, Number(argText)));
  else if (argText) warn?.(`OTEL_TRACES_SAMPLER_ARG=${JSON.stringify(argText.slice(0, 64))} is ignored: it must be a number from 0 to 1`);
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

/** The OTLP protocol for a signal: its own variable, the general one, else the config's (`grpc` is not offered). */
export function protocolFor(signal: 'TRACES' | 'METRICS', settings: Settings, env: Env = process.env, warn?: Warn): Protocol {
  const value = envChoice(env, `OTEL_EXPORTER_OTLP_${signal}_PROTOCOL`, PROTOCOLS, warn) || envChoice(env, 'OTEL_EXPORTER_OTLP_PROTOCOL', PROTOCOLS, warn);
  return (value as Protocol) || settings.protocol;
}

/**
 * The URL a signal is sent to when no OTEL_EXPORTER_OTLP_*ENDPOINT variable is set (the exporter
 * reads those itself): the config's endpoint plus the signal's path; undefined: the exporter's default.
 */
function urlFor(signal: 'TRACES' | 'METRICS', settings: Settings, env: Env): string | undefined {
  if (env[`OTEL_EXPORTER_OTLP_${signal}_ENDPOINT`] || env.OTEL_EXPORTER_OTLP_ENDPOINT || !settings.endpoint) return undefined;
  return `${settings.endpoint.replace(/\/+$/, '')}/v1/${signal.toLowerCase()}`;
}

/**
 * The span processor: on http/protobuf (the default), spans written as they end and sent through
 * the SDK's OTLP/HTTP transport (src/telemetry/otlp-spans.ts); on http/json, the SDK's batch
 * processor and JSON exporter.
 */
async function spanProcessor(settings: Settings, env: Env, warn?: Warn): Promise<SpanProcessor> {
  const url = urlFor('TRACES', settings, env);
  const headers = env.OTEL_EXPORTER_OTLP_HEADERS || env.OTEL_EXPORTER_OTLP_TRACES_HEADERS ? undefined : settings.headers;
  if (protocolFor('TRACES', settings, env, warn) === 'http/json') {
    const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
    return new BatchSpanProcessor(new OTLPTraceExporter({ url, headers }), { scheduledDelayMillis: settings.export_interval_ms });
  }
  const [{ createOtlpHttpExportDelegate, convertLegacyHttpOptions }, { ProtobufTraceSerializer }, { EncodingSpanProcessor }] = await Promise.all([
    import('@opentelemetry/otlp-exporter-base/node-http'),
    import('@opentelemetry/otlp-transformer'),
    import('./otlp-spans.js'),
  ]);
  const sender = createOtlpHttpExportDelegate(
    convertLegacyHttpOptions({ url, headers }, 'TRACES', 'v1/traces', { 'Content-Type': 'application/x-protobuf' }),
    { serializeRequest: (batch: EncodedSpans) => batch.body, deserializeResponse: (data: Uint8Array) => ProtobufTraceSerializer.deserializeResponse(data) },
    'otlp_http_span_exporter',
    { name: 'span', countItems: (batch: EncodedSpans) => batch.count },
    undefined,
  );
  const batch = Number(env.OTEL_BSP_MAX_EXPORT_BATCH_SIZE);
  return new EncodingSpanProcessor(sender, { delayMs: settings.export_interval_ms, maxBatch: Number.isInteger(batch) && batch > 0 ? batch : 512 });
}

async function metricExporter(settings: Settings, env: Env, warn?: Warn): Promise<PushMetricExporter> {
  const url = urlFor('METRICS', settings, env);
  const headers = env.OTEL_EXPORTER_OTLP_HEADERS || env.OTEL_EXPORTER_OTLP_METRICS_HEADERS ? undefined : settings.headers;
  if (protocolFor('METRICS', settings, env, warn) === 'http/json') {
    const { OTLPMetricExporter } = await import('@opentelemetry/exporter-metrics-otlp-http');
    return new OTLPMetricExporter({ url, headers });
  }
  const { OTLPMetricExporter } = await import('@opentelemetry/exporter-metrics-otlp-proto');
  return new OTLPMetricExporter({ url, headers });
}

/**
 * Starts tracing (and metrics, unless `settings.metrics` is false), registered as the global
 * providers; `warn` is told of each OTEL_* variable whose value is ignored.
 */
export async function startSdk(settings: Settings, producer: MetricProducer | null, env: Env = process.env, warnEach?: Warn): Promise<RunningTelemetry> {
  // Both signals read OTEL_EXPORTER_OTLP_PROTOCOL: one warning for it.
  const told = new Set<string>();
  const warn =
    warnEach &&
    ((m: string) => {
      if (told.has(m)) return;
      told.add(m);
      warnEach(m);
    });
  const resource = resourceFromAttributes({
    'service.name': env.OTEL_SERVICE_NAME?.trim() || settings.service_name,
    'service.version': process.env.npm_package_version ?? '0.1.0',
  });
  const sampler = samplerFrom(settings, env, warn);
  const tracer = new BasicTracerProvider({
    resource,
    sampler,
    idGenerator: ids,
    spanProcessors: [await spanProcessor(settings, env, warn)],
  });
  // No context manager and no global propagator: the gateway carries its trace context on the
  // request (src/telemetry/trace.ts) and writes traceparent headers itself.
  trace.setGlobalTracerProvider(tracer);
  let meter: MeterProvider | null = null;
  if (settings.metrics) {
    const reader = new PeriodicExportingMetricReader({
      exporter: await metricExporter(settings, env, warn),
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

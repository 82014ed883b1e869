import type { Attributes } from '@opentelemetry/api';

// The GenAI client metrics of the OpenTelemetry semantic conventions, recorded per upstream
// attempt while telemetry runs with metrics on (nothing is recorded otherwise). The gateway's own
// series (requests, tasks, credit, breakers) are the Prometheus registry's, exported through OTLP
// by src/telemetry/prometheus-bridge.ts.
//
// Aggregated here rather than by the SDK's histogram instruments: an SDK histogram hashes its
// attribute set on every record (sorting and serializing it), which profiled as the largest part
// of tracing's cost on an unsampled chat request. Here an attempt's series key is built once per
// attempt and a record is a bucket search; the SDK reads the series at each export through a
// MetricProducer (src/telemetry/sdk.ts), as cumulative explicit-bucket histograms.

/** One attribute set's cumulative histogram. */
export interface HistogramSeries {
  attributes: Attributes;
  /** Per bucket: (boundaries[i-1], boundaries[i]], the last one above every boundary. */
  counts: number[];
  sum: number;
  count: number;
  min: number;
  max: number;
}

/** Attribute sets kept per instrument; past it, records go to one overflow series (as the SDK does). */
const CARDINALITY_LIMIT = 2000;
const OVERFLOW = '\0overflow';

export class GenAiHistogram {
  readonly series = new Map<string, HistogramSeries>();

  constructor(
    readonly name: string,
    readonly unit: string,
    readonly description: string,
    readonly boundaries: readonly number[],
  ) {}

  /** Adds `value` to the series `key` names (`attributes` are asked for only when the series is new). */
  record(key: string, attributes: () => Attributes, value: number): void {
    let s = this.series.get(key);
    if (!s) {
      const full = this.series.size >= CARDINALITY_LIMIT - 1;
      if (full) s = this.series.get(OVERFLOW);
      if (!s) {
        s = { attributes: full ? { 'otel.metric.overflow': true } : attributes(), counts: new Array<number>(this.boundaries.length + 1).fill(0), sum: 0, count: 0, min: Infinity, max: -Infinity };
        this.series.set(full ? OVERFLOW : key, s);
      }
    }
    const b = this.boundaries;
    let i = 0;
    while (i < b.length && value > b[i]) i++;
    s.counts[i]++;
    s.sum += value;
    s.count++;
    if (value < s.min) s.min = value;
    if (value > s.max) s.max = value;
  }
}

export const operationDuration = new GenAiHistogram('gen_ai.client.operation.duration', 's', 'GenAI operation duration.', [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92]);
export const tokenUsage = new GenAiHistogram('gen_ai.client.token.usage', '{token}', 'Number of input and output tokens used.', [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864]);

let recording = false;

/** Set by the SDK module when metrics start (from nothing recorded) and stop. */
export function setMetrics(on: boolean): void {
  recording = on;
  if (on) {
    operationDuration.series.clear();
    tokenUsage.series.clear();
  }
}

/** Whether GenAI metrics are recorded. */
export function metricsOn(): boolean {
  return recording;
}

/** One upstream attempt's duration (`errorType` when it failed); `key` names `attributes` (built once per attempt). */
export function recordOperation(key: string, attributes: Attributes, seconds: number, errorType?: string): void {
  if (!recording) return;
  if (errorType) operationDuration.record(`${key}\n!${errorType}`, () => ({ ...attributes, 'error.type': errorType }), seconds);
  else operationDuration.record(key, () => attributes, seconds);
}

/** The tokens a successful chat call used. */
export function recordTokens(key: string, attributes: Attributes, input: number | undefined, output: number | undefined): void {
  if (!recording) return;
  if (input !== undefined) tokenUsage.record(`${key}\ninput`, () => ({ ...attributes, 'gen_ai.token.type': 'input' }), input);
  if (output !== undefined) tokenUsage.record(`${key}\noutput`, () => ({ ...attributes, 'gen_ai.token.type': 'output' }), output);
}

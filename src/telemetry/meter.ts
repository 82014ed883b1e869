import type { Attributes } from '@opentelemetry/api';

// The GenAI client metrics of the OpenTelemetry semantic conventions, recorded per upstream
// attempt while telemetry runs with metrics on (nothing is recorded otherwise). The gateway's own
// series (requests, tasks, credit, breakers) are the Prometheus registry's, exported through OTLP
// by src/telemetry/prometheus-bridge.ts.
//
// Aggregated here rather than by the SDK's histogram instruments: an SDK histogram hashes its
// attribute set on every record (sorting and serializing it), which profiled as the largest part
// of tracing's cost on an unsampled chat request. Here the series of a model on a channel are
// found once (AttemptSeries) and a record is a bucket search; the SDK reads the series at each
// export through a MetricProducer (src/telemetry/sdk.ts), as cumulative explicit-bucket histograms.

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
    this.add(this.seriesOf(key, attributes), value);
  }

  /** The series `key` names, made when new (past the cardinality limit: the overflow series). */
  seriesOf(key: string, attributes: () => Attributes): HistogramSeries {
    let s = this.series.get(key);
    if (!s) {
      const full = this.series.size >= CARDINALITY_LIMIT - 1;
      if (full) s = this.series.get(OVERFLOW);
      if (!s) {
        s = { attributes: full ? { 'otel.metric.overflow': true } : attributes(), counts: new Array<number>(this.boundaries.length + 1).fill(0), sum: 0, count: 0, min: Infinity, max: -Infinity };
        this.series.set(full ? OVERFLOW : key, s);
      }
    }
    return s;
  }

  add(s: HistogramSeries, value: number): void {
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
/** Counts metric starts: series held by an AttemptSeries from an earlier start are gone. */
let epoch = 0;

/** Set by the SDK module when metrics start (from nothing recorded) and stop. */
export function setMetrics(on: boolean): void {
  recording = on;
  if (on) {
    operationDuration.series.clear();
    tokenUsage.series.clear();
    epoch++;
  }
}

/**
 * The series one kind of attempt records to (a model on a channel): found once and held, so an
 * attempt's record is a bucket search. `key` names `attributes` among the instruments' series.
 */
export class AttemptSeries {
  private epoch = -1;
  private duration: HistogramSeries | null = null;
  private input: HistogramSeries | null = null;
  private output: HistogramSeries | null = null;

  constructor(
    private readonly key: string,
    private readonly attributes: Attributes,
  ) {}

  /** One attempt's duration (`errorType` when it failed). */
  operation(seconds: number, errorType?: string): void {
    if (!recording) return;
    if (errorType) {
      operationDuration.record(`${this.key}\n!${errorType}`, () => ({ ...this.attributes, 'error.type': errorType }), seconds);
      return;
    }
    this.check();
    operationDuration.add((this.duration ??= operationDuration.seriesOf(this.key, () => this.attributes)), seconds);
  }

  /** The tokens a successful chat call used. */
  tokens(input: number | undefined, output: number | undefined): void {
    if (!recording) return;
    this.check();
    if (input !== undefined) tokenUsage.add((this.input ??= tokenUsage.seriesOf(`${this.key}\ninput`, () => ({ ...this.attributes, 'gen_ai.token.type': 'input' }))), input);
    if (output !== undefined) tokenUsage.add((this.output ??= tokenUsage.seriesOf(`${this.key}\noutput`, () => ({ ...this.attributes, 'gen_ai.token.type': 'output' }))), output);
  }

  /** Series held from before the instruments were cleared (metrics restarted) are let go. */
  private check(): void {
    if (this.epoch === epoch) return;
    this.epoch = epoch;
    this.duration = this.input = this.output = null;
  }
}

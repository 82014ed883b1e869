import { ValueType, type Attributes, type HrTime } from '@opentelemetry/api';
import { emptyResource } from '@opentelemetry/resources';
import { AggregationTemporality, DataPointType, type CollectionResult, type MetricData, type MetricProducer } from '@opentelemetry/sdk-metrics';
import type { Registry } from 'prom-client';

// The gateway's Prometheus registry (/metrics) read at every OTLP export, so one set of
// instruments feeds both: counters become cumulative monotonic sums, gauges gauges, histograms
// explicit-bucket histograms. Loaded with the SDK (src/telemetry/sdk.ts), never when telemetry is off.

interface PromValue {
  value: number;
  labels: Record<string, string | number>;
  metricName?: string;
}

interface PromMetric {
  name: string;
  help: string;
  type: string;
  values: PromValue[];
}

function hrTime(ms: number): HrTime {
  return [Math.floor(ms / 1000), Math.round((ms % 1000) * 1e6)];
}

function attributesOf(labels: Record<string, string | number>, skip?: string): Attributes {
  const out: Attributes = {};
  for (const k in labels) if (k !== skip) out[k] = labels[k];
  return out;
}

/** One histogram's series (`_bucket`, `_sum`, `_count` per label set) as OTLP data points. */
function histogramPoints(metric: PromMetric, start: HrTime, end: HrTime) {
  const byLabels = new Map<string, { attributes: Attributes; bounds: [number, number][]; sum: number; count: number }>();
  for (const v of metric.values) {
    const attributes = attributesOf(v.labels, 'le');
    const id = JSON.stringify(attributes);
    let entry = byLabels.get(id);
    if (!entry) byLabels.set(id, (entry = { attributes, bounds: [], sum: 0, count: 0 }));
    if (v.metricName?.endsWith('_bucket')) {
      const le = v.labels.le;
      if (le !== '+Inf') entry.bounds.push([Number(le), v.value]);
    } else if (v.metricName?.endsWith('_sum')) entry.sum = v.value;
    else if (v.metricName?.endsWith('_count')) entry.count = v.value;
  }
  return [...byLabels.values()].map((e) => {
    e.bounds.sort((a, b) => a[0] - b[0]);
    // Prometheus buckets are cumulative; OTLP's hold each bucket's own count (the last is +Inf's).
    const counts: number[] = [];
    let below = 0;
    for (const [, cumulative] of e.bounds) {
      counts.push(Math.max(0, cumulative - below));
      below = cumulative;
    }
    counts.push(Math.max(0, e.count - below));
    return { startTime: start, endTime: end, attributes: e.attributes, value: { buckets: { boundaries: e.bounds.map((b) => b[0]), counts }, sum: e.sum, count: e.count } };
  });
}

function toMetricData(metric: PromMetric, start: HrTime, end: HrTime): MetricData | null {
  const descriptor = { name: metric.type === 'counter' ? metric.name.replace(/_total$/, '') : metric.name, description: metric.help, unit: '', valueType: ValueType.DOUBLE };
  const points = () => metric.values.map((v) => ({ startTime: start, endTime: end, attributes: attributesOf(v.labels), value: v.value }));
  switch (metric.type) {
    case 'counter':
      return { descriptor, aggregationTemporality: AggregationTemporality.CUMULATIVE, dataPointType: DataPointType.SUM, isMonotonic: true, dataPoints: points() };
    case 'gauge':
      return { descriptor, aggregationTemporality: AggregationTemporality.CUMULATIVE, dataPointType: DataPointType.GAUGE, dataPoints: points() };
    case 'histogram':
      return { descriptor, aggregationTemporality: AggregationTemporality.CUMULATIVE, dataPointType: DataPointType.HISTOGRAM, dataPoints: histogramPoints(metric, start, end) };
    default:
      return null;
  }
}

/** A MetricProducer reading `registry` (its series appear under the `mediagate` scope). */
export function prometheusProducer(registry: Registry): MetricProducer {
  const start = hrTime(Date.now());
  return {
    async collect(): Promise<CollectionResult> {
      const end = hrTime(Date.now());
      const json = (await registry.getMetricsAsJSON()) as unknown as PromMetric[];
      const metrics = json.map((m) => toMetricData(m, start, end)).filter((m): m is MetricData => m !== null && m.dataPoints.length > 0);
      return { resourceMetrics: { resource: emptyResource(), scopeMetrics: [{ scope: { name: 'mediagate.prometheus' }, metrics }] }, errors: [] };
    },
  };
}

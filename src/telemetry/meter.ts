import type { Attributes, Histogram, Meter } from '@opentelemetry/api';

// The GenAI client metrics of the OpenTelemetry semantic conventions, recorded per upstream
// attempt while telemetry runs with metrics on (nothing is recorded otherwise). The gateway's own
// series (requests, tasks, credit, breakers) are the Prometheus registry's, exported through OTLP
// by src/telemetry/prometheus-bridge.ts.

interface GenAiInstruments {
  duration: Histogram;
  tokens: Histogram;
}

let instruments: GenAiInstruments | null = null;

/** Set by the SDK module when metrics start (null: stopped). */
export function setMeter(meter: Meter | null): void {
  instruments = meter
    ? {
        duration: meter.createHistogram('gen_ai.client.operation.duration', {
          unit: 's',
          description: 'GenAI operation duration.',
          advice: { explicitBucketBoundaries: [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92] },
        }),
        tokens: meter.createHistogram('gen_ai.client.token.usage', {
          unit: '{token}',
          description: 'Number of input and output tokens used.',
          advice: { explicitBucketBoundaries: [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864] },
        }),
      }
    : null;
}

/** One upstream attempt's duration (`errorType` when it failed). */
export function recordOperation(attributes: Attributes, seconds: number, errorType?: string): void {
  if (!instruments) return;
  instruments.duration.record(seconds, errorType ? { ...attributes, 'error.type': errorType } : attributes);
}

/** The tokens a successful chat call used. */
export function recordTokens(attributes: Attributes, input: number | undefined, output: number | undefined): void {
  if (!instruments) return;
  if (input !== undefined) instruments.tokens.record(input, { ...attributes, 'gen_ai.token.type': 'input' });
  if (output !== undefined) instruments.tokens.record(output, { ...attributes, 'gen_ai.token.type': 'output' });
}

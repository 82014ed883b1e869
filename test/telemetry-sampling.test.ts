import { afterEach, describe, expect, it } from 'vitest';
import { SamplingDecision, type Context, type SpanKind } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, TraceIdRatioBasedSampler, type Sampler } from '@opentelemetry/sdk-trace-base';
import { ids, setTracer, startServerSpan, type TracedRequest } from '../src/telemetry/trace.js';

// The server span's sampling decision is taken by the gateway (the unsampled fast path) and, for a
// sampled request, again by the SDK: both must judge the same trace id, the one the span carries.

/** A ratio sampler that notes every trace id it is asked about. */
class NotingSampler implements Sampler {
  readonly asked: string[] = [];
  private readonly ratio = new TraceIdRatioBasedSampler(0.5);
  shouldSample(context: Context, traceId: string, _name: string, _kind: SpanKind) {
    this.asked.push(traceId);
    return this.ratio.shouldSample(context, traceId);
  }
  toString() {
    return 'Noting';
  }
}

function request(headers: Record<string, string> = {}): TracedRequest {
  return { method: 'POST', url: '/v1/chat/completions', headers, protocol: 'http', route: { url: '/v1/chat/completions' }, principal: null, trace: null };
}

afterEach(() => setTracer(null));

describe('server span sampling', () => {
  it('a sampled new trace keeps the trace id it was judged by; an unsampled one never reaches the SDK', () => {
    const sampler = new NotingSampler();
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ sampler, idGenerator: ids, spanProcessors: [new SimpleSpanProcessor(exporter)] });
    setTracer(provider.getTracer('test'), sampler);
    const requests = Array.from({ length: 40 }, () => request());
    for (const r of requests) startServerSpan(r);
    const sampled = requests.filter((r) => r.trace!.isRecording());
    const unsampled = requests.filter((r) => !r.trace!.isRecording());
    expect(sampled.length).toBeGreaterThan(0);
    expect(unsampled.length).toBeGreaterThan(0);
    for (const r of sampled) {
      const id = r.trace!.spanContext().traceId;
      // Asked twice about this id: by the gateway, then by the SDK starting the span.
      expect(sampler.asked.filter((x) => x === id)).toHaveLength(2);
      expect(r.trace!.spanContext().traceFlags).toBe(1);
      expect(sampler.shouldSample({} as Context, id, '', 1 as SpanKind).decision).toBe(SamplingDecision.RECORD_AND_SAMPLED);
    }
    for (const r of unsampled) {
      const ctx = r.trace!.spanContext();
      expect(sampler.asked.filter((x) => x === ctx.traceId)).toHaveLength(1);
      expect(ctx.traceFlags).toBe(0);
      expect(ctx.spanId).toMatch(/^[0-9a-f]{16}$/);
      expect(ctx.spanId).not.toBe('0'.repeat(16));
    }
    expect(new Set(requests.map((r) => r.trace!.spanContext().traceId)).size).toBe(40);
    for (const r of sampled) r.trace!.end();
    expect(exporter.getFinishedSpans().map((s) => s.spanContext().traceId).sort()).toEqual(sampled.map((r) => r.trace!.spanContext().traceId).sort());
    // The primed id is used once: a later root span draws its own.
    expect(ids.nextTraceId).toBe('');
  });

  it('an incoming traceparent: its trace id is the one judged and kept, with its tracestate', () => {
    const sampler = new NotingSampler();
    const provider = new BasicTracerProvider({ sampler, idGenerator: ids });
    setTracer(provider.getTracer('test'), sampler);
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const r = request({ traceparent: `00-${traceId}-00f067aa0ba902b7-01`, tracestate: 'vendor=abc' });
    startServerSpan(r);
    expect(sampler.asked[0]).toBe(traceId);
    expect(r.trace!.spanContext().traceId).toBe(traceId);
    expect(r.trace!.spanContext().spanId).not.toBe('00f067aa0ba902b7');
    expect(r.trace!.spanContext().traceState?.get('vendor')).toBe('abc');
  });
});

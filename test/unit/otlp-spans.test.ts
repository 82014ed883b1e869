import { describe, expect, it } from 'vitest';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, TraceFlags, createTraceState, trace, type Attributes } from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { ExportTrace } from '../helpers/otlp-receiver.js';
import { EncodingSpanProcessor, ProtoWriter, exportRequest, writeSpan, type EncodedSpans } from '../../src/telemetry/otlp-spans.js';

// The spans the http/protobuf path writes as they end must decode to what the SDK's own OTLP
// serializer makes of the same spans: both are decoded with the OTLP trace schema, every field.

const decode = (body: Uint8Array) => ExportTrace.toObject(ExportTrace.decode(body), { longs: String, bytes: String, defaults: true });

/** Spans of every shape the gateway makes and then some, from a real SDK tracer. */
function spans(): ReadableSpan[] {
  const memory = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'mediagate-test', 'service.version': '1.2.3' }),
    spanProcessors: [new SimpleSpanProcessor(memory)],
    spanLimits: { attributeCountLimit: 42, eventCountLimit: 3, linkCountLimit: 2 },
  });
  const tracer = provider.getTracer('mediagate', '0.1.0');
  const long = 'é'.repeat(30) + 'x'.repeat(200);
  const attributes: Attributes = {
    short: 'chat gpt-4o',
    empty: '',
    unicode: 'naïve — 数据 🚀',
    widest: '€'.repeat(42),
    asciiThenWide: 'abc'.repeat(13) + '€',
    long,
    huge: 'y'.repeat(20_000),
    int: 42,
    zero: 0,
    negative: -7,
    big: 2 ** 40,
    veryNegative: -(2 ** 60),
    float: 0.000123,
    infinity: Infinity,
    yes: true,
    no: false,
    strings: ['stop', 'length', ''],
    numbers: [1, 2.5, -3],
    flags: [true, false],
    gaps: ['a', null, 'b'] as unknown as string[],
  };
  const remote = trace.wrapSpanContext({ traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: TraceFlags.SAMPLED, isRemote: true, traceState: createTraceState('vendor=abc,other=1') });
  const server = tracer.startSpan('POST /v1/chat/completions', { kind: SpanKind.SERVER, attributes }, trace.setSpan(ROOT_CONTEXT, remote));
  const child = tracer.startSpan('chat gpt-4o', { kind: SpanKind.CLIENT, links: [{ context: remote.spanContext(), attributes: { why: 'created by' } }, { context: server.spanContext() }, { context: remote.spanContext() }] }, trace.setSpan(ROOT_CONTEXT, server));
  child.addEvent('gen_ai.first_token');
  child.addEvent('with attributes', { n: 3, s: 'x' });
  for (let i = 0; i < 4; i++) child.addEvent(`over the limit ${i}`);
  for (let i = 0; i < 45; i++) child.setAttribute(`a${i}`, i);
  child.setStatus({ code: SpanStatusCode.ERROR, message: 'upstream answered 503' });
  child.end();
  const internal = tracer.startSpan('credit hold', {}, trace.setSpan(ROOT_CONTEXT, server));
  internal.setStatus({ code: SpanStatusCode.OK });
  internal.end();
  server.end();
  const root = tracer.startSpan('video task', { root: true, kind: SpanKind.PRODUCER });
  root.end();
  tracer.startSpan('consumer', { kind: SpanKind.CONSUMER }).end();
  return memory.getFinishedSpans();
}

describe('OTLP protobuf spans', () => {
  it('decode to what the SDK serializer makes of the same spans, field for field', () => {
    const list = spans();
    expect(list).toHaveLength(5);
    const w = new ProtoWriter(64);
    for (const s of list) writeSpan(w, 2, s);
    const ours = decode(exportRequest([{ resource: list[0].resource, scope: list[0].instrumentationScope, spans: w }]));
    const sdk = decode(ProtobufTraceSerializer.serializeRequest(list)!);
    expect(ours).toEqual(sdk);
    // The cases are really there (the comparison is not of two empty messages).
    const got = ours.resource_spans[0].scope_spans[0].spans;
    expect(got.map((s: { name: string }) => s.name)).toEqual(list.map((s) => s.name));
    const byName = (n: string) => got.find((s: { name: string }) => s.name === n);
    const attrs = Object.fromEntries(byName('POST /v1/chat/completions').attributes.map((kv: { key: string; value: Record<string, unknown> }) => [kv.key, kv.value]));
    expect(attrs.huge.string_value).toHaveLength(20_000);
    expect(attrs.veryNegative.int_value).toBe((-(2n ** 60n)).toString());
    const client = byName('chat gpt-4o');
    expect(client.dropped_events_count).toBe(3);
    expect(client.dropped_attributes_count).toBe(3);
    expect(client.dropped_links_count).toBe(1);
    expect(client.status).toEqual({ code: 2, message: 'upstream answered 503' });
  });

  it('the processor writes sampled spans only, sends a batch when full or after the delay, and flushes on shutdown', async () => {
    const list = spans();
    const sent: EncodedSpans[] = [];
    let shut = false;
    const sender = {
      export(batch: EncodedSpans, done: (r: ExportResult) => void) {
        sent.push({ body: Uint8Array.from(batch.body), count: batch.count });
        setImmediate(() => done({ code: ExportResultCode.SUCCESS }));
      },
      forceFlush: async () => {},
      shutdown: async () => {
        shut = true;
      },
    };
    const p = new EncodingSpanProcessor(sender, { delayMs: 50, maxBatch: 3 });
    const unsampled = Object.create(list[1], { spanContext: { value: () => ({ ...list[1].spanContext(), traceFlags: TraceFlags.NONE }) } }) as ReadableSpan;
    p.onEnd(unsampled);
    // A span that fails half-way through its writing is left out whole.
    const broken = Object.create(list[0], { attributes: { get: () => ({ fine: 1, get bad(): string { throw new Error('unreadable') } }) } }) as ReadableSpan;
    p.onEnd(broken);
    for (const s of list.slice(0, 3)) p.onEnd(s);
    expect(sent.map((b) => b.count)).toEqual([3]);
    p.onEnd(list[3]);
    expect(sent).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 120));
    expect(sent.map((b) => b.count)).toEqual([3, 1]);
    p.onEnd(list[4]);
    await p.shutdown();
    expect(shut).toBe(true);
    expect(sent.map((b) => b.count)).toEqual([3, 1, 1]);
    const names = sent.flatMap((b) => decode(b.body).resource_spans[0].scope_spans[0].spans.map((s: { name: string }) => s.name));
    expect(names).toEqual(list.map((s) => s.name));
    p.onEnd(list[0]);
    expect(sent).toHaveLength(3);
  });
});

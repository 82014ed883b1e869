// An OTLP/HTTP receiver for tests: accepts /v1/traces and /v1/metrics as http/json or
// http/protobuf (decoded with the OTLP trace schema), keeps every raw body for secret searches.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import protobuf from 'protobufjs';

// The messages of opentelemetry/proto/{collector/trace,trace,common,resource}/v1, every field of the trace ones.
const OTLP_TRACE_PROTO = `
syntax = "proto3";
package otlp;
message AnyValue { oneof value { string string_value = 1; bool bool_value = 2; int64 int_value = 3; double double_value = 4; ArrayValue array_value = 5; KeyValueList kvlist_value = 6; bytes bytes_value = 7; } }
message ArrayValue { repeated AnyValue values = 1; }
message KeyValueList { repeated KeyValue values = 1; }
message KeyValue { string key = 1; AnyValue value = 2; }
message Resource { repeated KeyValue attributes = 1; uint32 dropped_attributes_count = 2; }
message InstrumentationScope { string name = 1; string version = 2; repeated KeyValue attributes = 3; uint32 dropped_attributes_count = 4; }
message Status { string message = 2; int32 code = 3; }
message Event { fixed64 time_unix_nano = 1; string name = 2; repeated KeyValue attributes = 3; uint32 dropped_attributes_count = 4; }
message Link { bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; repeated KeyValue attributes = 4; uint32 dropped_attributes_count = 5; fixed32 flags = 6; }
message Span {
  bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; bytes parent_span_id = 4; string name = 5; int32 kind = 6;
  fixed64 start_time_unix_nano = 7; fixed64 end_time_unix_nano = 8; repeated KeyValue attributes = 9; uint32 dropped_attributes_count = 10;
  repeated Event events = 11; uint32 dropped_events_count = 12; repeated Link links = 13; uint32 dropped_links_count = 14; Status status = 15; fixed32 flags = 16;
}
message ScopeSpans { InstrumentationScope scope = 1; repeated Span spans = 2; string schema_url = 3; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; string schema_url = 3; }
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
`;
export const ExportTrace = protobuf.parse(OTLP_TRACE_PROTO, { keepCase: true }).root.lookupType('otlp.ExportTraceServiceRequest');

export type Attrs = Record<string, unknown>;

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** 1 internal, 2 server, 3 client. */
  kind: number;
  startNs: bigint;
  endNs: bigint;
  attributes: Attrs;
  events: { name: string; attributes: Attrs }[];
  links: { traceId: string; spanId: string }[];
  status: { code: number; message: string };
  serviceName: string;
}

export interface ReceivedMetric {
  name: string;
  /** Data points as sent (JSON shape). */
  points: { attributes: Attrs; value: unknown }[];
}

export interface OtlpReceiver {
  url: string;
  spans: ReceivedSpan[];
  metrics: ReceivedMetric[];
  /** Every body as received, as text (protobuf bodies as latin1), for secret searches. */
  bodies: string[];
  contentTypes: string[];
  close(): Promise<void>;
}

function anyValue(v: any): unknown {
  if (!v) return undefined;
  if ('string_value' in v || 'stringValue' in v) return v.string_value ?? v.stringValue;
  if ('bool_value' in v || 'boolValue' in v) return v.bool_value ?? v.boolValue;
  if ('int_value' in v || 'intValue' in v) return Number(v.int_value ?? v.intValue);
  if ('double_value' in v || 'doubleValue' in v) return Number(v.double_value ?? v.doubleValue);
  const arr = v.array_value ?? v.arrayValue;
  if (arr) return (arr.values ?? []).map(anyValue);
  return undefined;
}

function attrs(list: any[] | undefined): Attrs {
  const out: Attrs = {};
  for (const kv of list ?? []) out[kv.key] = anyValue(kv.value);
  return out;
}

function hex(v: unknown): string {
  if (!v) return '';
  if (typeof v === 'string') return v.toLowerCase();
  return Buffer.from(v as Uint8Array).toString('hex');
}

function toSpans(req: any): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rs of req.resource_spans ?? req.resourceSpans ?? []) {
    const serviceName = String(attrs(rs.resource?.attributes)['service.name'] ?? '');
    for (const ss of rs.scope_spans ?? rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        out.push({
          traceId: hex(s.trace_id ?? s.traceId),
          spanId: hex(s.span_id ?? s.spanId),
          parentSpanId: hex(s.parent_span_id ?? s.parentSpanId),
          name: s.name,
          kind: Number(s.kind ?? 0),
          startNs: BigInt(String(s.start_time_unix_nano ?? s.startTimeUnixNano ?? 0)),
          endNs: BigInt(String(s.end_time_unix_nano ?? s.endTimeUnixNano ?? 0)),
          attributes: attrs(s.attributes),
          events: (s.events ?? []).map((e: any) => ({ name: e.name, attributes: attrs(e.attributes) })),
          links: (s.links ?? []).map((l: any) => ({ traceId: hex(l.trace_id ?? l.traceId), spanId: hex(l.span_id ?? l.spanId) })),
          status: { code: Number(s.status?.code ?? 0), message: s.status?.message ?? '' },
          serviceName,
        });
      }
    }
  }
  return out;
}

function toMetrics(req: any): ReceivedMetric[] {
  const out: ReceivedMetric[] = [];
  for (const rm of req.resourceMetrics ?? []) {
    for (const sm of rm.scopeMetrics ?? []) {
      for (const m of sm.metrics ?? []) {
        const data = m.sum ?? m.gauge ?? m.histogram ?? {};
        out.push({
          name: m.name,
          points: (data.dataPoints ?? []).map((p: any) => ({ attributes: attrs(p.attributes), value: p.asDouble ?? p.asInt ?? { count: Number(p.count), sum: p.sum, bucketCounts: p.bucketCounts } })),
        });
      }
    }
  }
  return out;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const r: Omit<OtlpReceiver, 'close' | 'url'> = { spans: [], metrics: [], bodies: [], contentTypes: [] };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const type = String(req.headers['content-type'] ?? '');
      r.contentTypes.push(`${req.url} ${type}`);
      r.bodies.push(body.toString('latin1'));
      try {
        if (req.url === '/v1/traces') {
          const decoded = type.includes('json') ? JSON.parse(body.toString('utf8')) : ExportTrace.toObject(ExportTrace.decode(body), { longs: String, bytes: Buffer });
          r.spans.push(...toSpans(decoded));
        } else if (req.url === '/v1/metrics' && type.includes('json')) {
          r.metrics.push(...toMetrics(JSON.parse(body.toString('utf8'))));
        }
        res.writeHead(200, { 'content-type': type.includes('json') ? 'application/json' : 'application/x-protobuf' });
        res.end(type.includes('json') ? '{}' : '');
      } catch (err) {
        res.writeHead(400);
        res.end(String(err));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return { ...r, url: `http://127.0.0.1:${port}`, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

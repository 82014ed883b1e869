import { globalErrorHandler, ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { TraceFlags, type AttributeValue, type Attributes, type HrTime } from '@opentelemetry/api';
import type { ReadableSpan, SpanProcessor } from '@opentelemetry/sdk-trace-base';

// The http/protobuf span path (the named fast path of tracing): each sampled span is written as an
// OTLP `Span` message the moment it ends, and only those bytes wait for the export, not the span's
// object graph. A batch processor keeps ended spans up to its export (hundreds of milliseconds under
// load), long enough for every one of them to be promoted to V8's old generation and collected
// there; that collection, with the exporter's serialization of the kept objects, was most of what a
// sampled request cost. The export itself goes through the SDK's OTLP/HTTP transport (endpoint,
// headers, timeout, compression and retries as the OTEL_EXPORTER_OTLP_* variables set them).
//
// Messages written (opentelemetry/proto, trace/v1 and common/v1): ExportTraceServiceRequest
// { repeated ResourceSpans resource_spans = 1 }; ResourceSpans { Resource resource = 1; repeated
// ScopeSpans scope_spans = 2; string schema_url = 3 }; ScopeSpans { InstrumentationScope scope = 1;
// repeated Span spans = 2; string schema_url = 3 }; Span { bytes trace_id = 1; bytes span_id = 2;
// string trace_state = 3; bytes parent_span_id = 4; string name = 5; SpanKind kind = 6; fixed64
// start_time_unix_nano = 7; fixed64 end_time_unix_nano = 8; repeated KeyValue attributes = 9;
// uint32 dropped_attributes_count = 10; repeated Event events = 11; uint32 dropped_events_count = 12;
// repeated Link links = 13; uint32 dropped_links_count = 14; Status status = 15; fixed32 flags = 16 }.

/** A hex digit's value by character code (0 for anything that is not one; undefined, taken as 0, past 255). */
const HEX_DIGIT = new Uint8Array(256);
for (let i = 0; i < 10; i++) HEX_DIGIT[48 + i] = i;
for (let i = 0; i < 6; i++) HEX_DIGIT[97 + i] = HEX_DIGIT[65 + i] = 10 + i;

/** An append-only protobuf writer over a growable buffer. */
export class ProtoWriter {
  buf: Buffer;
  pos = 0;

  constructor(size = 16 * 1024) {
    this.buf = Buffer.allocUnsafe(size);
  }

  /** Room for `n` more bytes. */
  private room(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  /** An unsigned varint (`v` a non-negative integer below 2^31), or any int64 through varint64. */
  varint(v: number): void {
    if (v < 0 || v > 0x7fffffff) return this.varint64(v);
    this.room(5);
    const b = this.buf;
    let p = this.pos;
    while (v > 127) {
      b[p++] = (v & 127) | 128;
      v >>>= 7;
    }
    b[p++] = v;
    this.pos = p;
  }

  /** An int64 as protobuf writes it: two's complement in 64 bits, as a varint. */
  private varint64(v: number): void {
    this.room(10);
    let n = BigInt.asUintN(64, BigInt(v));
    while (n > 127n) {
      this.buf[this.pos++] = Number(n & 127n) | 128;
      n >>= 7n;
    }
    this.buf[this.pos++] = Number(n);
  }

  tag(field: number, wire: number): void {
    this.varint((field << 3) | wire);
  }

  /** A length-delimited UTF-8 string. */
  string(field: number, s: string): void {
    this.tag(field, 2);
    const len = s.length;
    if (len < 43) {
      // At most 3 bytes a UTF-16 unit: the length fits the one byte it is given. ASCII is copied
      // here (most names and values are short ASCII); anything else is encoded by Buffer.
      this.room(1 + len * 3);
      const b = this.buf;
      const at = this.pos + 1;
      let i = 0;
      for (; i < len; i++) {
        const c = s.charCodeAt(i);
        if (c > 127) break;
        b[at + i] = c;
      }
      const n = i === len ? len : i + b.write(s.slice(i), at + i);
      b[this.pos] = n;
      this.pos = at + n;
      return;
    }
    const n = Buffer.byteLength(s);
    this.varint(n);
    this.room(n);
    this.pos += this.buf.write(s, this.pos, n);
  }

  /** A hex id as `bytes` of `size` bytes (a digit that is not hex counts as 0; a short id is zero-filled). */
  hexId(field: number, id: string, size: number): void {
    this.tag(field, 2);
    this.room(1 + size);
    const b = this.buf;
    let p = this.pos;
    b[p++] = size;
    for (let i = 0; i < size; i++) b[p++] = (HEX_DIGIT[id.charCodeAt(2 * i)] << 4) | HEX_DIGIT[id.charCodeAt(2 * i + 1)];
    this.pos = p;
  }

  bytes(field: number, value: Uint8Array): void {
    this.tag(field, 2);
    this.varint(value.length);
    this.raw(value);
  }

  fixed32(field: number, v: number): void {
    this.tag(field, 5);
    this.room(4);
    this.pos = this.buf.writeUInt32LE(v >>> 0, this.pos);
  }

  double(field: number, v: number): void {
    this.tag(field, 1);
    this.room(8);
    this.pos = this.buf.writeDoubleLE(v, this.pos);
  }

  /** An HrTime as fixed64 nanoseconds since the epoch (exact: computed in 16-bit parts, below 2^53). */
  time(field: number, t: HrTime): void {
    this.tag(field, 1);
    this.room(8);
    const [seconds, nanos] = t;
    // seconds * 1e9 + nanos = high * 2^16 * 1e9 + low * 1e9 + nanos, seconds = high * 2^16 + low.
    const a = Math.floor(seconds / 65536) * 1e9;
    const b = (seconds % 65536) * 1e9 + nanos;
    const lo = (a % 65536) * 65536 + (b % 4294967296);
    const hi = Math.floor(a / 65536) + Math.floor(b / 4294967296) + Math.floor(lo / 4294967296);
    this.buf.writeUInt32LE(lo % 4294967296, this.pos);
    this.pos = this.buf.writeUInt32LE(hi >>> 0, this.pos + 4);
  }

  /** Starts a length-delimited message; end() with what it returns closes it. */
  begin(field: number): number {
    this.tag(field, 2);
    this.room(1);
    return this.pos++;
  }

  /** Closes the message begun at `at`: its length goes before it (the body moves when it needs more than one byte). */
  end(at: number): void {
    const len = this.pos - at - 1;
    if (len < 128) {
      this.buf[at] = len;
      return;
    }
    let size = 1;
    for (let v = len; v > 127; v >>>= 7) size++;
    this.room(size - 1);
    this.buf.copyWithin(at + size, at + 1, this.pos);
    const end = this.pos + size - 1;
    this.pos = at;
    this.varint(len);
    this.pos = end;
  }

  /** Bytes copied in as they are (already whole fields). */
  raw(bytes: Uint8Array): void {
    this.room(bytes.length);
    this.buf.set(bytes, this.pos);
    this.pos += bytes.length;
  }

  /** What was written, as a view of the buffer (valid until the next write). */
  view(): Buffer {
    return this.buf.subarray(0, this.pos);
  }

  reset(): void {
    this.pos = 0;
  }
}

const MIN_INT64 = -(2 ** 63);
const MAX_INT64 = 2 ** 63;

/** An AnyValue's body: a string, bool, int64 (integers in range), double, bytes, array or key-value list. */
function anyValue(w: ProtoWriter, value: unknown): void {
  switch (typeof value) {
    case 'string':
      w.string(1, value);
      return;
    case 'boolean':
      w.tag(2, 0);
      w.varint(value ? 1 : 0);
      return;
    case 'number':
      if (Number.isInteger(value) && value >= MIN_INT64 && value < MAX_INT64) {
        w.tag(3, 0);
        w.varint(value);
      } else w.double(4, value);
      return;
    case 'object':
      if (value === null) return;
      if (value instanceof Uint8Array) w.bytes(7, value);
      else if (Array.isArray(value)) {
        const list = w.begin(5);
        for (const item of value) {
          const at = w.begin(1);
          anyValue(w, item);
          w.end(at);
        }
        w.end(list);
      } else {
        const list = w.begin(6);
        keyValues(w, 1, value as Record<string, unknown>);
        w.end(list);
      }
      return;
    default:
    // Anything else has no AnyValue: an empty one.
  }
}

/** Each own property of `attributes` as a KeyValue in `field`. */
function keyValues(w: ProtoWriter, field: number, attributes: Record<string, unknown> | Attributes): void {
  for (const key in attributes) {
    if (!Object.prototype.hasOwnProperty.call(attributes, key)) continue;
    const kv = w.begin(field);
    w.string(1, key);
    const v = w.begin(2);
    anyValue(w, (attributes as Record<string, AttributeValue | undefined>)[key]);
    w.end(v);
    w.end(kv);
  }
}

/** Span.flags: the W3C trace flags, with whether the parent is remote (bits 8 and 9). */
function spanFlags(traceFlags: number, parentRemote: boolean | undefined): number {
  let flags = (traceFlags & 0xff) | 0x100;
  if (parentRemote) flags |= 0x200;
  return flags;
}

/** One ended span as `Span` in `field` (ScopeSpans.spans). */
export function writeSpan(w: ProtoWriter, field: number, span: ReadableSpan): void {
  const at = w.begin(field);
  const ctx = span.spanContext();
  w.hexId(1, ctx.traceId, 16);
  w.hexId(2, ctx.spanId, 8);
  const state = ctx.traceState?.serialize();
  if (state) w.string(3, state);
  const parent = span.parentSpanContext;
  if (parent?.spanId) w.hexId(4, parent.spanId, 8);
  w.string(5, span.name);
  // The API's SpanKind counts from INTERNAL = 0; OTLP's from SPAN_KIND_UNSPECIFIED = 0.
  w.tag(6, 0);
  w.varint(span.kind + 1);
  w.time(7, span.startTime);
  w.time(8, span.endTime);
  keyValues(w, 9, span.attributes);
  if (span.droppedAttributesCount) {
    w.tag(10, 0);
    w.varint(span.droppedAttributesCount);
  }
  for (const event of span.events) {
    const e = w.begin(11);
    w.time(1, event.time);
    w.string(2, event.name);
    if (event.attributes) keyValues(w, 3, event.attributes);
    if (event.droppedAttributesCount) {
      w.tag(4, 0);
      w.varint(event.droppedAttributesCount);
    }
    w.end(e);
  }
  if (span.droppedEventsCount) {
    w.tag(12, 0);
    w.varint(span.droppedEventsCount);
  }
  for (const link of span.links) {
    const l = w.begin(13);
    w.hexId(1, link.context.traceId, 16);
    w.hexId(2, link.context.spanId, 8);
    const linkState = link.context.traceState?.serialize();
    if (linkState) w.string(3, linkState);
    if (link.attributes) keyValues(w, 4, link.attributes);
    if (link.droppedAttributesCount) {
      w.tag(5, 0);
      w.varint(link.droppedAttributesCount);
    }
    w.fixed32(6, spanFlags(link.context.traceFlags, link.context.isRemote));
    w.end(l);
  }
  if (span.droppedLinksCount) {
    w.tag(14, 0);
    w.varint(span.droppedLinksCount);
  }
  const status = w.begin(15);
  if (span.status.message) w.string(2, span.status.message);
  if (span.status.code) {
    w.tag(3, 0);
    w.varint(span.status.code);
  }
  w.end(status);
  w.fixed32(16, spanFlags(ctx.traceFlags, parent?.isRemote));
  w.end(at);
}

type Resource = ReadableSpan['resource'];
type Scope = ReadableSpan['instrumentationScope'];

/** The spans of one resource and scope, written so far (each a ScopeSpans.spans field). */
interface Group {
  resource: Resource;
  scope: Scope;
  spans: ProtoWriter;
}

/** A batch of written spans, ready to send: the ExportTraceServiceRequest's bytes and its span count. */
export interface EncodedSpans {
  body: Uint8Array;
  count: number;
}

/** Wraps the written spans of each group into one ExportTraceServiceRequest. */
export function exportRequest(groups: Group[]): Uint8Array {
  let size = 1024;
  for (const g of groups) size += g.spans.pos;
  const w = new ProtoWriter(size);
  for (const g of groups) {
    const rs = w.begin(1);
    const res = w.begin(1);
    keyValues(w, 1, g.resource.attributes);
    w.end(res);
    const ss = w.begin(2);
    const scope = w.begin(1);
    w.string(1, g.scope.name);
    if (g.scope.version) w.string(2, g.scope.version);
    w.end(scope);
    const spans = g.spans.view();
    // The spans are whole ScopeSpans.spans fields already: copied as they are.
    w.raw(spans);
    if (g.scope.schemaUrl) w.string(3, g.scope.schemaUrl);
    w.end(ss);
    if (g.resource.schemaUrl) w.string(3, g.resource.schemaUrl);
    w.end(rs);
  }
  return w.view();
}

/** Where written batches go: the SDK's OTLP export delegate (its transport, retries and limits). */
export interface SpanSender {
  export(batch: EncodedSpans, done: (result: ExportResult) => void): void;
  forceFlush(): Promise<void>;
  shutdown(): Promise<void>;
}

/**
 * The span processor of the http/protobuf path: a sampled span is written when it ends; a batch
 * goes out when it holds `maxBatch` spans or `delayMs` after its first span, whichever is first.
 */
export class EncodingSpanProcessor implements SpanProcessor {
  private readonly groups: Group[] = [];
  private count = 0;
  private timer: NodeJS.Timeout | null = null;
  private readonly inFlight = new Set<Promise<void>>();
  private stopped = false;

  constructor(
    private readonly sender: SpanSender,
    private readonly opts: { delayMs: number; maxBatch: number },
  ) {}

  onStart(): void {}

  onEnd(span: ReadableSpan): void {
    if (this.stopped || (span.spanContext().traceFlags & TraceFlags.SAMPLED) === 0) return;
    const w = this.groupOf(span.resource, span.instrumentationScope).spans;
    const mark = w.pos;
    try {
      writeSpan(w, 2, span);
    } catch (err) {
      // A span that cannot be written is left out whole: the batch stays well-formed.
      w.pos = mark;
      globalErrorHandler(err as Error);
      return;
    }
    this.count++;
    if (this.count >= this.opts.maxBatch) this.flush();
    else if (!this.timer) {
      this.timer = setTimeout(() => {
        this.timer = null;
        this.flush();
      }, this.opts.delayMs);
      this.timer.unref();
    }
  }

  /** The group of a resource and scope (a gateway has one of each). */
  private groupOf(resource: Resource, scope: Scope): Group {
    for (const g of this.groups) if (g.resource === resource && g.scope === scope) return g;
    const g = { resource, scope, spans: new ProtoWriter() };
    this.groups.push(g);
    return g;
  }

  /** Sends what is written (nothing when nothing is). */
  private flush(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    if (this.count === 0) return;
    const live = this.groups.filter((g) => g.spans.pos > 0);
    const batch: EncodedSpans = { body: exportRequest(live), count: this.count };
    for (const g of live) g.spans.reset();
    this.count = 0;
    const sent = new Promise<void>((resolve) => {
      this.sender.export(batch, (result) => {
        if (result.code !== ExportResultCode.SUCCESS) globalErrorHandler(result.error ?? new Error(`the export of ${batch.count} spans failed`));
        resolve();
      });
    });
    this.inFlight.add(sent);
    void sent.then(() => this.inFlight.delete(sent));
  }

  async forceFlush(): Promise<void> {
    this.flush();
    await Promise.all([...this.inFlight]);
    await this.sender.forceFlush();
  }

  async shutdown(): Promise<void> {
    if (this.stopped) return;
    await this.forceFlush();
    this.stopped = true;
    await this.sender.shutdown();
  }
}

import type { ServerResponse } from 'node:http';
import { oversized } from '../upstream/json.js';
import type { ChunkSink } from '../upstream/client.js';

// Server-sent events both ways: reading an upstream's stream and writing the client's stream with
// back-pressure.

/** One event of an upstream stream: its name (`event:`), if any, and its data lines joined by LF. */
export interface SseEvent {
  event?: string;
  data: string;
}

/** One `data:` frame (OpenAI streams name no events). */
export function dataFrame(data: string): string {
  return `data: ${dataLines(data)}\n\n`;
}

/** One named frame (Anthropic streams name every event; its SDK skips unnamed ones). */
export function eventFrame(event: string, data: string): string {
  return `event: ${event}\ndata: ${dataLines(data)}\n\n`;
}

// A payload with line breaks (never compact JSON, but possible from a lenient upstream) needs one
// `data:` line per line, or the frame would end early.
function dataLines(data: string): string {
  return data.includes('\n') ? data.split('\n').join('\ndata: ') : data;
}

export const DONE_FRAME = 'data: [DONE]\n\n';

/** Where an upstream stream's bytes come from (src/upstream/client.ts UpstreamStream is one). */
export interface ChunkSource {
  /** The next chunk of the body, or null at its end; rejects when the body broke. */
  next(): Promise<Buffer | null>;
  /** Stops the body (the connection is closed unless the body already ended). */
  cancel(): void;
  /** Reads the rest of the body without keeping it. */
  discard(): void;
  /** From now on every chunk goes to `sink` as it arrives (then the end or the failure, once). */
  pushTo?(sink: ChunkSink): void;
  /** After pushTo(): the sink takes chunks again, having refused one. */
  resume?(): void;
}

/** Where SseReader.pushTo() hands the events. */
export interface EventSink {
  /** The events of a chunk (at least one); false: no more until the reader's resume(). */
  events(events: SseEvent[]): boolean;
  /** The body ended (its last events, if any, came first). */
  end(): void;
  /** The body broke, or an event grew past the limit. */
  fail(err: unknown): void;
}

const LF = 10;
const CR = 13;
const COLON = 58;
const SPACE = 32;

/**
 * Reads an upstream body as SSE events, parsing its bytes as they come: lines end at LF, CR or
 * CRLF (also across chunks); a `data:` line's value is decoded from UTF-8 on its own (a line break
 * is never inside a multi-byte character, so no decoder state is kept between chunks); `event:`
 * names the event; comments, `id:` and `retry:` are skipped (no translator reads them); a blank
 * line dispatches an event that had at least one data line (as eventsource-parser and the
 * WHATWG rules do); a byte order mark at the start is dropped. `next()` resolves with the events
 * of the next chunk(s) that held at least one complete event, or null at the end of the body;
 * pulling only on demand lets back-pressure reach the upstream socket. pushTo() hands the events
 * of every chunk to a sink as the chunk arrives instead (no promise per chunk, for a stream held
 * open for long), with the same back-pressure: a sink that refuses events pauses the source.
 */
export class SseReader implements ChunkSink {
  /** Events complete but not yet handed out (null when none). */
  private pending: SseEvent[] | null = null;
  /** The bytes of a line not ended yet, and their count. */
  private parts: Buffer[] | null = null;
  private partBytes = 0;
  /** The event being read: its data lines (joined by LF), their count, its name, its bytes so far. */
  private data = '';
  private dataLines = 0;
  private event: string | undefined = undefined;
  private eventBytes = 0;
  /** The last chunk ended with CR: an LF starting the next one belongs to the same line break. */
  private afterCR = false;
  private started = false;
  private ended = false;
  private sink: EventSink | null = null;

  /** `maxEventBytes`: an event (or a line) growing past this fails the read as `oversized`. */
  constructor(
    private readonly source: ChunkSource,
    private readonly maxEventBytes = Infinity,
  ) {}

  async next(): Promise<SseEvent[] | null> {
    let out = this.pending;
    while (!out) {
      if (this.ended) return null;
      const chunk = await this.source.next();
      if (chunk === null) this.finish();
      else this.feed(chunk);
      out = this.pending;
    }
    this.pending = null;
    return out;
  }

  /**
   * From now on the events go to `sink` as their chunks arrive (after next() has resolved: no
   * event is pending then). A source that cannot push is pulled in a loop.
   */
  pushTo(sink: EventSink): void {
    if (this.ended) return sink.end();
    this.sink = sink;
    if (this.source.pushTo) return this.source.pushTo(this);
    void this.pull(sink);
  }

  /** After pushTo(): the sink takes events again, having refused some. */
  resume(): void {
    if (this.source.resume) this.source.resume();
    else if (this.sink) void this.pull(this.sink);
  }

  private async pull(sink: EventSink): Promise<void> {
    try {
      for (let events = await this.next(); events; events = await this.next()) if (!sink.events(events) || this.sink !== sink) return;
    } catch (err) {
      if (this.sink === sink) this.fail(err);
      return;
    }
    if (this.sink === sink) {
      this.sink = null;
      sink.end();
    }
  }

  /** ChunkSink: a pushed chunk, parsed; its events go to the sink. */
  push(chunk: Buffer): boolean {
    const sink = this.sink;
    if (!sink) return true;
    try {
      this.feed(chunk);
    } catch (err) {
      this.sink = null;
      sink.fail(err);
      return true;
    }
    const events = this.pending;
    if (!events) return true;
    this.pending = null;
    return sink.events(events);
  }

  /** ChunkSink: the pushed body ended. */
  end(): void {
    const sink = this.sink;
    this.sink = null;
    if (!sink) return;
    this.finish();
    const events = this.pending;
    this.pending = null;
    if (events) sink.events(events);
    sink.end();
  }

  /** ChunkSink: the pushed body broke. */
  fail(err: unknown): void {
    const sink = this.sink;
    this.sink = null;
    sink?.fail(err);
  }

  /** Parses one chunk of the body; complete events go to `pending`. */
  private feed(chunk: Buffer): void {
    let buf = chunk;
    let pos = 0;
    if (this.afterCR) {
      this.afterCR = false;
      if (buf.length > 0 && buf[0] === LF) pos = 1;
    }
    const parts = this.parts;
    if (parts) {
      // An unfinished line: nothing to do until a line break comes.
      parts.push(pos ? buf.subarray(pos) : buf);
      this.partBytes += buf.length - pos;
      if (buf.indexOf(LF, pos) < 0 && buf.indexOf(CR, pos) < 0) return this.measure();
      buf = Buffer.concat(parts, this.partBytes);
      pos = 0;
      this.parts = null;
      this.partBytes = 0;
    }
    const len = buf.length;
    let cr = buf.indexOf(CR, pos);
    while (pos < len) {
      const lf = buf.indexOf(LF, pos);
      if (cr >= 0 && cr < pos) cr = buf.indexOf(CR, pos);
      let end: number;
      let next: number;
      if (cr >= 0 && (lf < 0 || cr < lf)) {
        end = cr;
        next = cr + 1;
        if (next === len) this.afterCR = true;
        else if (buf[next] === LF) next++;
      } else if (lf >= 0) {
        end = lf;
        next = lf + 1;
      } else break;
      this.line(buf, pos, end);
      pos = next;
    }
    if (pos < len) {
      this.parts = [pos ? buf.subarray(pos) : buf];
      this.partBytes = len - pos;
    }
    this.measure();
  }

  /** The body ended: a last line without its break, and a last event without its blank line, still count. */
  private finish(): void {
    const parts = this.parts;
    if (parts) {
      const buf = parts.length === 1 ? parts[0] : Buffer.concat(parts, this.partBytes);
      this.parts = null;
      this.partBytes = 0;
      this.line(buf, 0, buf.length);
    }
    this.dispatch();
    this.ended = true;
  }

  private line(buf: Buffer, start: number, end: number): void {
    if (!this.started) {
      this.started = true;
      if (end - start >= 3 && buf[start] === 0xef && buf[start + 1] === 0xbb && buf[start + 2] === 0xbf) start += 3;
    }
    if (start === end) return this.dispatch();
    this.eventBytes += end - start + 1;
    const first = buf[start];
    if (first === COLON) return; // a comment
    if (first === 100 /* d */ && end - start >= 5 && buf[start + 1] === 97 && buf[start + 2] === 116 && buf[start + 3] === 97 && buf[start + 4] === COLON) {
      return this.dataLine(buf.toString('utf8', buf[start + 5] === SPACE && start + 5 < end ? start + 6 : start + 5, end));
    }
    let colon = buf.indexOf(COLON, start);
    if (colon < 0 || colon >= end) colon = end;
    const field = buf.toString('latin1', start, colon);
    let valueStart = colon + 1;
    if (valueStart < end && buf[valueStart] === SPACE) valueStart++;
    const value = valueStart < end ? buf.toString('utf8', valueStart, end) : '';
    if (field === 'data') this.dataLine(value);
    else if (field === 'event') this.event = value || undefined;
    // `id`, `retry` and unknown fields: nothing a translator reads.
  }

  private dataLine(value: string): void {
    this.data = this.dataLines === 0 ? value : `${this.data}\n${value}`;
    this.dataLines++;
  }

  private dispatch(): void {
    if (this.dataLines > 0) (this.pending ??= []).push({ event: this.event, data: this.data });
    this.data = '';
    this.dataLines = 0;
    this.event = undefined;
    this.eventBytes = 0;
  }

  /**
   * Without a bound, an upstream that never ends a line or an event would grow what is held here
   * without limit: the unfinished line plus the lines of the unfinished event are counted.
   */
  private measure(): void {
    if (this.partBytes + this.eventBytes > this.maxEventBytes) {
      // Stopped as cancel() would, the sink (if any) kept: it hears of the failure.
      this.ended = true;
      this.parts = null;
      this.source.cancel();
      throw oversized('an upstream stream event', this.maxEventBytes);
    }
  }

  /** Stops reading; the upstream request is aborted so its socket is not left half-read. */
  cancel(): void {
    this.ended = true;
    this.sink = null;
    this.parts = null;
    this.source.cancel();
  }

  /** Reads the rest of the body without keeping it, so its keep-alive connection can be reused. */
  discard(): void {
    this.ended = true;
    this.sink = null;
    this.source.discard();
  }
}

/**
 * Writes a client's stream. `write` reports whether the socket buffer is below its high-water mark;
 * when it is not, the caller awaits `drain()` before reading more from the upstream.
 */
export class SseWriter {
  constructor(readonly res: ServerResponse) {}

  get closed(): boolean {
    return this.res.destroyed || this.res.writableEnded;
  }

  write(text: string): boolean {
    if (this.closed) return true;
    return this.res.write(text);
  }

  /** Resolves on 'drain', or at once when the client is gone (nothing will drain then). */
  drain(): Promise<void> {
    if (this.closed || !this.res.writableNeedDrain) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        this.res.off('drain', done);
        this.res.off('close', done);
        resolve();
      };
      this.res.on('drain', done);
      this.res.on('close', done);
    });
  }

  end(text?: string): void {
    if (this.closed) return;
    if (text) this.res.end(text);
    else this.res.end();
  }
}

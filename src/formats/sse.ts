import type { ServerResponse } from 'node:http';
import { createParser, type EventSourceMessage, type EventSourceParser } from 'eventsource-parser';
import { oversized } from '../upstream/json.js';

// Server-sent events both ways: reading an upstream's stream (eventsource-parser) and writing the
// client's stream with back-pressure.

export type SseEvent = EventSourceMessage;

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

/**
 * Reads an upstream body as SSE events. `next()` resolves with the events of the next network
 * chunk(s) that held at least one complete event, or null at the end of the body. Pulling only on
 * demand lets back-pressure reach the upstream socket.
 */
export class SseReader {
  private readonly parser: EventSourceParser;
  private readonly decoder = new TextDecoder();
  private readonly iterator: AsyncIterator<Buffer | Uint8Array | string>;
  private pending: SseEvent[] = [];
  /** Characters since the last line break, and since the last complete event (the parser buffers both). */
  private lineChars = 0;
  private eventChars = 0;

  /** `maxEventChars`: an event (or a line) growing past this fails the read as `oversized`. */
  constructor(
    body: AsyncIterable<Buffer | Uint8Array | string>,
    private readonly maxEventChars = Infinity,
  ) {
    this.iterator = body[Symbol.asyncIterator]();
    this.parser = createParser({ onEvent: (ev) => this.pending.push(ev) });
  }

  async next(): Promise<SseEvent[] | null> {
    while (this.pending.length === 0) {
      const r = await this.iterator.next();
      if (r.done) {
        const tail = this.decoder.decode();
        if (tail) this.parser.feed(tail);
        // A last event without its blank line still counts (some servers end that way).
        this.parser.feed('\n\n');
        if (this.pending.length === 0) return null;
        break;
      }
      const chunk = r.value;
      const text = typeof chunk === 'string' ? chunk : this.decoder.decode(chunk, { stream: true });
      this.parser.feed(text);
      this.measure(text);
    }
    const out = this.pending;
    this.pending = [];
    return out;
  }

  /**
   * Counts what the parser is holding: without a bound, an upstream that never ends a line or an
   * event would grow it without limit. Exact for lines, within one network chunk for events.
   */
  private measure(text: string): void {
    const lastBreak = Math.max(text.lastIndexOf('\n'), text.lastIndexOf('\r'));
    this.lineChars = lastBreak < 0 ? this.lineChars + text.length : text.length - lastBreak - 1;
    this.eventChars = this.pending.length ? this.lineChars : this.eventChars + text.length;
    if (this.lineChars > this.maxEventChars || this.eventChars > this.maxEventChars) {
      void this.cancel();
      throw oversized('an upstream stream event', this.maxEventChars);
    }
  }

  /** Stops reading; the body stream is destroyed so its socket is not left half-read. */
  async cancel(): Promise<void> {
    try {
      await this.iterator.return?.();
    } catch {
      // already broken
    }
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

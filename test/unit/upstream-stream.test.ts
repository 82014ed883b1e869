import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { UpstreamClient, type UpstreamStream } from '../../src/upstream/client.js';
import { UpstreamFailure } from '../../src/upstream/failure.js';
import { SseReader, type ChunkSource, type SseEvent } from '../../src/formats/sse.js';

// Streamed upstream answers: UpstreamClient.openStream() (a dispatch handler the reader pulls
// chunks from, pausing the socket while nobody asks) and SseReader (the SSE bytes parsed as they
// come).

/** A chunk source over fixed pieces, recording what the reader asked of it. */
function pieces(parts: (string | Buffer)[]): ChunkSource & { cancelled: boolean; discarded: boolean } {
  const left = parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : p));
  const src = {
    cancelled: false,
    discarded: false,
    next: async () => left.shift() ?? null,
    cancel: () => void (src.cancelled = true),
    discard: () => void (src.discarded = true),
  };
  return src;
}

async function all(reader: SseReader): Promise<SseEvent[]> {
  const out: SseEvent[] = [];
  for (let evs = await reader.next(); evs; evs = await reader.next()) out.push(...evs.map((e) => ({ event: e.event, data: e.data })));
  return out;
}

/** The text split into pieces of `size` bytes (cutting lines, CRLFs and multi-byte characters anywhere). */
function cut(text: string, size: number): Buffer[] {
  const bytes = Buffer.from(text);
  const out: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.subarray(i, i + size));
  return out;
}

describe('SseReader', () => {
  const text = 'event: a\r\ndata: {"t":"héllo ✓"}\r\n\r\n: a comment\nid: 7\nretry: 10\ndata: one\ndata:two\r\rdata\n\nevent: b\ndata: [DONE]\n\n';
  const expected = [
    { event: 'a', data: '{"t":"héllo ✓"}' },
    { event: undefined, data: 'one\ntwo' },
    { event: undefined, data: '' },
    { event: 'b', data: '[DONE]' },
  ];

  it('gives the same events however the bytes are cut: LF, CR and CRLF line ends, multi-byte characters, comments, id and retry skipped', async () => {
    for (const size of [1, 2, 3, 5, 7, 11, 64, 1000]) expect(await all(new SseReader(pieces(cut(text, size))))).toEqual(expected);
  });

  it('drops a byte order mark at the start; a last line and event without their breaks still count', async () => {
    expect(await all(new SseReader(pieces([Buffer.from([0xef, 0xbb]), Buffer.from([0xbf]), 'data: x\n\ndata: y'])))).toEqual([
      { event: undefined, data: 'x' },
      { event: undefined, data: 'y' },
    ]);
    // A name without data is no event.
    expect(await all(new SseReader(pieces(['event: ping\n\n', 'data: z\n'])))).toEqual([{ event: undefined, data: 'z' }]);
  });

  it('fails as oversized when a line or an event grows past the cap, and stops the source', async () => {
    const line = pieces(['data: ', 'x'.repeat(60), 'x'.repeat(60)]);
    const err = await new SseReader(line, 100).next().then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(UpstreamFailure);
    expect((err as UpstreamFailure).kind).toBe('oversized');
    expect(line.cancelled).toBe(true);

    const lines = pieces(Array.from({ length: 20 }, () => 'data: short line\n'));
    const err2 = await new SseReader(lines, 100).next().then(
      () => null,
      (e: unknown) => e,
    );
    expect((err2 as UpstreamFailure).kind).toBe('oversized');
    expect(lines.cancelled).toBe(true);

    // Many events, each under the cap, are fine whatever their total.
    const many = pieces(Array.from({ length: 50 }, (_, i) => `data: event number ${i}\n\n`));
    expect(await all(new SseReader(many, 100))).toHaveLength(50);
  });

  it('pushTo() hands a pulled source\'s events to a sink; a sink that refuses gets nothing more until resume(), then the rest and the end', async () => {
    const got: string[] = [];
    let refuse = true;
    let ended = false;
    const reader = new SseReader(pieces(['data: a\n\n', 'data: b\n\ndata: c\n\n', 'data: d']));
    reader.pushTo({
      events: (evs) => {
        got.push(...evs.map((e) => e.data));
        const take = !refuse;
        refuse = false;
        return take;
      },
      end: () => void (ended = true),
      fail: (err) => {
        throw err;
      },
    });
    await new Promise((r) => setTimeout(r, 20));
    expect(got).toEqual(['a']);
    reader.resume();
    await vi.waitFor(() => expect(ended).toBe(true));
    expect(got).toEqual(['a', 'b', 'c', 'd']);
  });

  it('pushTo() fails the sink, once, when an event grows past the cap, and stops the source', async () => {
    const line = pieces(['data: ', 'x'.repeat(60), 'x'.repeat(60), 'x\n\n']);
    const failures: unknown[] = [];
    new SseReader(line, 100).pushTo({ events: () => true, end: () => failures.push('end'), fail: (err) => failures.push(err) });
    await vi.waitFor(() => expect(line.cancelled).toBe(true));
    await new Promise((r) => setTimeout(r, 20));
    expect(failures).toHaveLength(1);
    expect((failures[0] as UpstreamFailure).kind).toBe('oversized');
  });
});

describe('UpstreamClient.openStream', () => {
  let server: Server;
  let base = '';
  /** How each request the server saw ended: 'finished' (answer sent) or 'closed' (the client hung up first). */
  const ends: string[] = [];
  const sockets = new Set<Socket>();
  /** The /big answer: bytes the server wrote so far, and whether it waits for 'drain'. */
  const big = { written: 0, waiting: false };
  const BIG_TOTAL = 48 * 1024 * 1024;
  const upstream = new UpstreamClient({ connectMs: 2000, firstByteMs: 5000, idleMs: 300, answerLimits: { bodyBytes: 1024, eventBytes: 1024 } });

  beforeAll(async () => {
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      sockets.add(req.socket);
      res.on('close', () => ends.push(res.writableFinished ? 'finished' : 'closed'));
      req.resume();
      req.on('end', () => {
        if (req.url === '/sse') {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.write('data: {"n":1}\n\n');
          setTimeout(() => res.end('data: {"n":2}\n\ndata: [DONE]\n\n'), 10);
          return;
        }
        if (req.url === '/stalls') {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          return void res.write('data: {"n":1}\n\n'); // and nothing more
        }
        if (req.url === '/busy') return res.writeHead(429, { 'retry-after': '7', 'content-type': 'application/json' }).end('{"error":{"message":"slow down"}}');
        if (req.url === '/big') {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          const frame = `data: ${'x'.repeat(16 * 1024 - 8)}\n\n`;
          const more = () => {
            big.waiting = false;
            while (big.written < BIG_TOTAL) {
              big.written += frame.length;
              if (!res.write(frame)) {
                big.waiting = true;
                return void res.once('drain', more);
              }
            }
            res.end();
          };
          return more();
        }
        if (req.url === '/hangs') return;
        res.writeHead(404).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterAll(async () => {
    await upstream.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const open = (path: string, signal?: AbortSignal) => upstream.openStream({ url: `${base}${path}`, method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}', signal });
  const failureOf = async (p: Promise<unknown>) => p.then(() => null, (err: unknown) => err);
  const readAll = async (s: UpstreamStream) => {
    let text = '';
    for (let c = await s.next(); c; c = await s.next()) text += c.toString();
    return text;
  };

  it('pulls the body chunk by chunk; a discarded answer leaves its connection to the next stream', async () => {
    sockets.clear();
    const s = await open('/sse');
    expect(s.statusCode).toBe(200);
    expect(s.contentType).toBe('text/event-stream');
    expect(await readAll(s)).toBe('data: {"n":1}\n\ndata: {"n":2}\n\ndata: [DONE]\n\n');
    // Wait until the pool counts the connection free again (it does so a tick after the answer ended).
    const idle = () => vi.waitFor(() => expect((upstream.agent.stats as Record<string, { free: number }>)[base]?.free).toBe(1));
    await idle();
    for (let i = 0; i < 3; i++) {
      const r = new SseReader(await open('/sse'));
      expect((await r.next())?.[0].data).toBe('{"n":1}');
      r.discard();
      await idle();
    }
    expect(sockets.size).toBe(1);
  });

  it('pauses the upstream socket while nobody asks for the next chunk, and delivers everything once asked again', async () => {
    const s = await open('/big');
    let got = (await s.next())?.length ?? 0;
    await vi.waitFor(() => expect(big.waiting).toBe(true), { timeout: 20_000 });
    // Held back, not buffered: the writer stays stuck well short of its total.
    for (let i = 0; i < 20; i++) {
      expect(big.waiting).toBe(true);
      expect(big.written).toBeLessThan(BIG_TOTAL / 2);
      await new Promise((r) => setTimeout(r, 25));
    }
    for (let c = await s.next(); c; c = await s.next()) got += c.length;
    expect(got).toBe(BIG_TOTAL);
  }, 60_000);

  it('pushTo(): chunks go to the sink as they arrive; one it refuses pauses the socket until resume(), then everything and the end arrive', async () => {
    big.written = 0;
    big.waiting = false;
    const s = await open('/big');
    let got = 0;
    let refused = 0;
    let ended = false;
    let take = false;
    s.pushTo({
      push: (chunk) => {
        got += chunk.length;
        if (take) return true;
        refused++;
        return false;
      },
      end: () => void (ended = true),
      fail: (err) => {
        throw err;
      },
    });
    await vi.waitFor(() => expect(big.waiting).toBe(true), { timeout: 20_000 });
    for (let i = 0; i < 20; i++) {
      expect(big.waiting).toBe(true);
      expect(big.written).toBeLessThan(BIG_TOTAL / 2);
      expect(refused).toBe(1);
      await new Promise((r) => setTimeout(r, 25));
    }
    take = true;
    s.resume();
    await vi.waitFor(() => expect(ended).toBe(true), { timeout: 20_000 });
    expect(got).toBe(BIG_TOTAL);
  }, 60_000);

  it('pushTo(): the events of a real stream, then its end; a body that goes quiet fails the sink as a timeout', async () => {
    const data: string[] = [];
    const r = new SseReader(await open('/sse'));
    expect((await r.next())?.[0].data).toBe('{"n":1}');
    await new Promise<void>((resolve, reject) => r.pushTo({ events: (evs) => data.push(...evs.map((e) => e.data)) > 0, end: resolve, fail: reject }));
    expect(data).toEqual(['{"n":2}', '[DONE]']);

    const quiet = new SseReader(await open('/stalls'));
    expect((await quiet.next())?.[0].data).toBe('{"n":1}');
    const err = await new Promise((resolve) => quiet.pushTo({ events: () => true, end: () => resolve('end'), fail: resolve }));
    expect(err).toBeInstanceOf(UpstreamFailure);
    expect((err as UpstreamFailure).kind).toBe('timeout');
  });

  it('hands an error status over with its body and headers', async () => {
    const s = await open('/busy');
    expect(s.statusCode).toBe(429);
    expect(s.headers['retry-after']).toBe('7');
    expect(await s.text()).toBe('{"error":{"message":"slow down"}}');
  });

  it('fails as a timeout when the upstream goes quiet mid-body', async () => {
    const s = await open('/stalls');
    expect((await s.next())?.toString()).toBe('data: {"n":1}\n\n');
    const err = await failureOf(s.next());
    expect(err).toBeInstanceOf(UpstreamFailure);
    expect((err as UpstreamFailure).kind).toBe('timeout');
  });

  it('aborts before the connection (no call), while waiting for headers, and mid-body; cancel() hangs up too', async () => {
    expect(((await failureOf(open('/sse', AbortSignal.abort()))) as UpstreamFailure).kind).toBe('aborted');

    ends.length = 0;
    const early = new AbortController();
    const pending = failureOf(open('/hangs', early.signal));
    setTimeout(() => early.abort(), 20);
    expect(((await pending) as UpstreamFailure).kind).toBe('aborted');

    const late = new AbortController();
    const s = await open('/stalls', late.signal);
    expect(await s.next()).not.toBeNull();
    const next = failureOf(s.next());
    late.abort();
    expect(((await next) as UpstreamFailure).kind).toBe('aborted');

    const c = await open('/stalls');
    expect(await c.next()).not.toBeNull();
    c.cancel();
    await vi.waitFor(() => expect(ends.filter((e) => e === 'closed')).toHaveLength(3));
  });
});

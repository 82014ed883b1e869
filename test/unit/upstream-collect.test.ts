import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { UpstreamClient } from '../../src/upstream/client.js';
import { UpstreamFailure } from '../../src/upstream/failure.js';
import { statusFailure } from '../../src/upstream/status-failure.js';

// UpstreamClient.collect(): a whole answer gathered by the dispatch itself (non-streamed chat),
// with the same caps, signal and failures as send() + readText().

describe('UpstreamClient.collect', () => {
  let server: Server;
  let base = '';
  /** How each request the server saw ended: 'finished' (answer sent) or 'closed' (the client hung up first). */
  const ends: string[] = [];
  let requests = 0;
  const upstream = new UpstreamClient({ connectMs: 2000, firstByteMs: 5000, idleMs: 5000, answerLimits: { bodyBytes: 1024, eventBytes: 1024 } });

  beforeAll(async () => {
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      requests++;
      res.on('close', () => ends.push(res.writableFinished ? 'finished' : 'closed'));
      let body = '';
      req.on('data', (c: Buffer) => (body += String(c)));
      req.on('end', () => {
        if (req.url === '/echo') return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ got: body, path: req.url }));
        if (req.url === '/chunks') {
          res.writeHead(200, { 'content-type': 'text/plain' });
          res.write('one ');
          setTimeout(() => res.end('two'), 20);
          return;
        }
        if (req.url === '/declared-large') return res.writeHead(200, { 'content-length': '4096' }).end('x'.repeat(4096));
        if (req.url === '/grows') {
          res.writeHead(200, { 'content-type': 'text/plain' });
          const more = () => {
            if (res.destroyed) return;
            res.write('y'.repeat(256));
            setTimeout(more, 5);
          };
          return more();
        }
        if (req.url === '/busy') return res.writeHead(429, { 'retry-after': '7', 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'slow down', code: 'rate_limited' } }));
        if (req.url === '/hangs') return; // never answers
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

  const post = (path: string, signal?: AbortSignal) => upstream.collect({ url: `${base}${path}`, method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"q":1}', signal });
  const failureOf = async (p: Promise<unknown>) => p.then(() => null, (err: unknown) => err);

  it('gathers a whole answer, one chunk or many, with its status and headers', async () => {
    const a = await post('/echo');
    expect(a.statusCode).toBe(200);
    expect(a.headers['content-type']).toBe('application/json');
    expect(JSON.parse(a.text)).toEqual({ got: '{"q":1}', path: '/echo' });
    const b = await post('/chunks');
    expect(b.text).toBe('one two');
  });

  it('fails as oversized on a declared or a growing body over the cap, and hangs up on the upstream', async () => {
    for (const path of ['/declared-large', '/grows']) {
      ends.length = 0;
      const err = await failureOf(post(path));
      expect(err).toBeInstanceOf(UpstreamFailure);
      expect((err as UpstreamFailure).kind).toBe('oversized');
      if (path === '/grows') await vi.waitFor(() => expect(ends).toEqual(['closed']));
    }
  });

  it('hands an error status to the provider mapping with its body and headers', async () => {
    const a = await post('/busy');
    expect(a.statusCode).toBe(429);
    const f = await statusFailure(a, (b: { error: { message: string; code: string } }) => b.error);
    expect(f).toMatchObject({ kind: 'status', status: 429, message: 'slow down', providerCode: 'rate_limited', retryAfterS: 7 });
  });

  it('aborts at once when the signal fires, and makes no call for a signal already aborted', async () => {
    ends.length = 0;
    const ac = new AbortController();
    const pending = failureOf(post('/hangs', ac.signal));
    await new Promise((r) => setTimeout(r, 50));
    ac.abort();
    const err = await pending;
    expect((err as UpstreamFailure).kind).toBe('aborted');
    await vi.waitFor(() => expect(ends).toEqual(['closed']));

    const before = requests;
    const gone = await failureOf(post('/echo', AbortSignal.abort()));
    expect((gone as UpstreamFailure).kind).toBe('aborted');
    // The next call is the next request the upstream sees.
    expect(JSON.parse((await post('/echo')).text).path).toBe('/echo');
    expect(requests).toBe(before + 1);
  });

  it('maps a URL it cannot call to an UpstreamFailure', async () => {
    const err = await failureOf(upstream.collect({ url: 'ftp://127.0.0.1/x', method: 'POST', headers: {} }));
    expect(err).toBeInstanceOf(UpstreamFailure);
    expect((err as UpstreamFailure).kind).toBe('connect');
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { startGateway, type TestGateway } from './helpers/gateway.js';
import { errorShapeProblem } from './helpers/error-shapes.js';

// A provider that answers far more than any real answer: a huge non-streamed JSON body, a stream
// event that never ends (no newline), and an event of endless short lines. The test upstream
// writes each answer as it goes (never holding it), honouring back-pressure, and counts what it
// managed to write before the gateway hung up. The gateway must answer 502 upstream_error, hang up
// soon after its cap, and keep its memory bounded with many such answers at once.

const MB = 1024 * 1024;
const BODY_CAP_MB = 4;
const EVENT_CAP_MB = 1;
const HUGE = 96 * MB;

const chunk = Buffer.alloc(64 * 1024, 'a');
const line = Buffer.from(`data: ${'b'.repeat(1018)}\n`);

describe('oversized upstream answers', () => {
  let upstream: Server;
  let gw: TestGateway;
  let key: string;
  const written: number[] = [];

  /** Writes `head`, then `piece` until `total` bytes or the gateway hangs up; records what was written. */
  function pump(res: ServerResponse, head: string, piece: Buffer, total: number, tail: string): void {
    let sent = 0;
    res.on('close', () => written.push(sent));
    res.write(head);
    const more = () => {
      while (sent < total && !res.destroyed) {
        sent += piece.length;
        if (!res.write(piece)) return void res.once('drain', more);
      }
      if (!res.destroyed) res.end(tail);
    };
    more();
  }

  beforeAll(async () => {
    upstream = createServer((req, res) => {
      let raw = '';
      req.on('data', (c: Buffer) => (raw += String(c)));
      req.on('end', () => {
        const model = (JSON.parse(raw) as { model: string }).model;
        if (model === 'huge-json') {
          res.writeHead(200, { 'content-type': 'application/json' });
          return pump(res, '{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"', chunk, HUGE, '"}}]}');
        }
        if (model === 'endless-line') {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          return pump(res, 'data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"', chunk, HUGE, '"}}]}\n\n');
        }
        if (model === 'endless-event') {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          return pump(res, '', line, HUGE, '\n');
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ id: 'x', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'small' } }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }));
      });
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(upstream.address() as { port: number }).port}/v1`;
    const models = Object.fromEntries(['huge-json', 'endless-line', 'endless-event', 'small'].map((m) => [m, { kind: 'chat', owned_by: 'openai' }]));
    gw = await startGateway({
      simulator: { embedded: false },
      relay: { max_body_mb: BODY_CAP_MB, max_stream_event_mb: EVENT_CAP_MB, max_attempts: 1 },
      channels: [{ name: 'big', type: 'openai', base_url: base, api_key: 'sk-upstream-oversized-test', models: Object.keys(models) }],
      models,
    });
    key = (await gw.createKey()).key;
  });

  afterAll(async () => {
    await gw?.close();
    upstream?.closeAllConnections();
    await new Promise<void>((resolve) => upstream?.close(() => resolve()));
  });

  const ask = async (model: string, stream = false) => {
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, stream, messages: [{ role: 'user', content: 'hi' }], max_tokens: 8 }),
      signal: AbortSignal.timeout(60_000),
    });
    return { status: res.status, body: (await res.json().catch(() => null)) as unknown };
  };

  it('answers 502 upstream_error to 16 concurrent oversized bodies, hangs up near the cap, and keeps RSS bounded', async () => {
    written.length = 0;
    const rssBefore = process.memoryUsage().rss;
    let peak = rssBefore;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
    const answers = await Promise.all(Array.from({ length: 16 }, () => ask('huge-json')));
    clearInterval(sampler);
    for (const a of answers) {
      expect(a.status).toBe(502);
      expect(errorShapeProblem('openai', a.body)).toBeNull();
      expect((a.body as { error: { code: string } }).error.code).toBe('upstream_error');
    }
    // The gateway hung up on each soon after its cap (socket buffers account for the slack).
    await new Promise((r) => setTimeout(r, 100));
    expect(written.length).toBe(16);
    for (const n of written) expect(n).toBeLessThan((BODY_CAP_MB + 16) * MB);
    expect(peak - rssBefore).toBeLessThan(400 * MB);
  });

  it('answers 502 upstream_error to a stream event without a newline and to an event of endless lines', async () => {
    written.length = 0;
    for (const model of ['endless-line', 'endless-event']) {
      const a = await ask(model, true);
      expect(a.status).toBe(502);
      expect((a.body as { error: { code: string } }).error.code).toBe('upstream_error');
    }
    await new Promise((r) => setTimeout(r, 100));
    for (const n of written) expect(n).toBeLessThan((EVENT_CAP_MB + 16) * MB);
  });

  it('still serves normal answers', async () => {
    const a = await ask('small');
    expect(a.status).toBe(200);
  });
});

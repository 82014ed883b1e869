import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { GatewayRequest, Reply } from '../../src/pipeline/request.js';

// The pipeline's reply: send() marks the answer sent at once and writes it with every other
// answer sent in the same turn of the event loop, in its check phase; an answer Node cannot write
// (a header value it refuses) ends its connection instead of throwing out of the loop.

const log = {} as Logger;

describe('Reply', () => {
  let server: Server;
  let port: number;
  const seen: { sentAtOnce: boolean; headersSentAtOnce: boolean }[] = [];

  beforeAll(async () => {
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      const reply = new Reply(res, new GatewayRequest(req, null, req.url ?? '', '', log, performance.now()));
      if (req.url === '/bad') {
        reply.header('x-bad', 'a\nb').send('never');
        return;
      }
      reply.code(201).header('content-type', 'application/json; charset=utf-8').send(JSON.stringify({ path: req.url }));
      // A second send in the same turn changes nothing.
      reply.send('ignored');
      seen.push({ sentAtOnce: reply.sent, headersSentAtOnce: res.headersSent });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const get = (path: string) =>
    new Promise<{ status: number; type?: string; length?: string; text: string }>((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port, path }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'], length: res.headers['content-length'], text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end();
    });

  it('marks the answer sent at once and writes it whole in the same turn of the loop', async () => {
    const answers = await Promise.all(['/a', '/b', '/c'].map(get));
    for (const [i, path] of ['/a', '/b', '/c'].entries()) {
      const text = JSON.stringify({ path });
      expect(answers[i]).toEqual({ status: 201, type: 'application/json; charset=utf-8', length: String(text.length), text });
    }
    expect(seen.length).toBe(3);
    for (const s of seen) expect(s).toEqual({ sentAtOnce: true, headersSentAtOnce: false });
  });

  it('ends the connection of an answer whose headers Node refuses, and goes on serving', async () => {
    await expect(get('/bad')).rejects.toThrow();
    expect((await get('/after')).status).toBe(201);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type Socket } from 'node:net';
import { startChatRig, type ChatRig } from './helpers/chat.js';
import { parseResponse } from './helpers/raw-http.js';

// While the gateway shuts down, a request that arrives on a keep-alive connection which was busy
// when closing began is answered 503 `shutting_down` in its path's error shape, with Retry-After
// and the connection closed — by the pipeline, before any route.

/** A connection that sends what it is given and keeps everything it receives until the server closes it. */
function openConnection(port: number): { socket: Socket; received: () => Buffer; firstBytes: Promise<void>; closed: Promise<void> } {
  const socket = connect(port, '127.0.0.1');
  const chunks: Buffer[] = [];
  let gotFirst!: () => void;
  const firstBytes = new Promise<void>((resolve) => (gotFirst = resolve));
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  socket.on('data', (c: Buffer) => {
    chunks.push(c);
    gotFirst();
  });
  socket.on('error', () => undefined);
  return { socket, received: () => Buffer.concat(chunks), firstBytes, closed };
}

/** The two answers on one connection: a chunked stream, then whatever followed it. */
function splitAfterChunked(raw: Buffer): [string, Buffer] {
  const text = raw.toString('latin1');
  const end = text.indexOf('\r\n0\r\n\r\n');
  if (end < 0) return [text, Buffer.alloc(0)];
  const cut = end + '\r\n0\r\n\r\n'.length;
  return [text.slice(0, cut), raw.subarray(Buffer.byteLength(text.slice(0, cut), 'latin1'))];
}

describe('requests that arrive while the gateway shuts down', () => {
  let rig: ChatRig;
  let port: number;

  beforeAll(async () => {
    rig = await startChatRig();
    port = Number(new URL(rig.gw.url).port);
    // Slow streams: each event 150 ms apart, so the stream is still running when closing begins.
    await fetch(`${rig.sim.url}/__sim/chat`, { method: 'POST', body: JSON.stringify({ stream_delay_ms: 150 }) });
  });
  // The app is closed by the test; closing it again here is a no-op.
  afterAll(async () => rig?.close());

  it('answers 503 shutting_down in the family error shape on a connection that was busy, after its stream ran to its end', async () => {
    const key = rig.key;
    const body = JSON.stringify({ model: 'gpt-sim', stream: true, messages: [{ role: 'user', content: 'one two three four five' }] });
    const streamRequest = `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    // Two connections, each busy with a stream when closing begins.
    const a = openConnection(port);
    const b = openConnection(port);
    a.socket.write(streamRequest);
    b.socket.write(streamRequest);
    await Promise.all([a.firstBytes, b.firstBytes]);

    const closing = rig.gw.app.close();
    await new Promise((r) => setTimeout(r, 100));
    // Two routes with a valid key: families openai and video.
    a.socket.write(`GET /v1/models HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n\r\n`);
    b.socket.write(`GET /v1/video/generations/task_doesnotmatter HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n\r\n`);
    await Promise.all([a.closed, b.closed]);
    await closing;

    for (const conn of [a, b]) {
      const [stream, rest] = splitAfterChunked(conn.received());
      // The stream in flight ran to its end.
      expect(stream.startsWith('HTTP/1.1 200')).toBe(true);
      expect(stream).toContain('data: [DONE]');
      const refused = parseResponse(rest);
      expect(refused.status).toBe(503);
      expect(refused.headers['retry-after']).toBe('1');
      expect(refused.headers.connection).toBe('close');
      expect(refused.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(refused.raw.toString('latin1')).not.toContain(key);
    }
    expect(JSON.parse(parseResponse(splitAfterChunked(a.received())[1]).body)).toEqual({
      error: { message: 'This gateway instance is shutting down; retry the request.', type: 'server_error', code: 'shutting_down', param: null },
    });
    expect(JSON.parse(parseResponse(splitAfterChunked(b.received())[1]).body)).toEqual({
      code: 'shutting_down',
      message: 'This gateway instance is shutting down; retry the request.',
      data: null,
    });
  });
});

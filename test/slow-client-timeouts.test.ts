import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type Socket } from 'node:net';
import { startGateway, type TestGateway } from './helpers/gateway.js';
import { parseResponse } from './helpers/raw-http.js';
import { eventually } from './helpers/eventually.js';

// Clients that hold a connection without finishing their request: a body dripping a byte at a
// time, headers that never end, a body nobody will read after a 401, and one address opening more
// connections than it may. Raw sockets, since fetch() cannot send that slowly.

interface Held {
  socket: Socket;
  received: () => Buffer;
  /** Resolves with ms since the socket opened when the server closes it. */
  closed: Promise<number>;
  /** Writes `byte` every `everyMs` until the socket closes. */
  drip(byte: string, everyMs: number): void;
}

function open(port: number): Promise<Held> {
  return new Promise((resolve, reject) => {
    const t0 = Date.now();
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let timer: NodeJS.Timeout | undefined;
    const closed = new Promise<number>((done) =>
      socket.on('close', () => {
        clearInterval(timer);
        done(Date.now() - t0);
      }),
    );
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', () => undefined);
    socket.once('connect', () =>
      resolve({
        socket,
        received: () => Buffer.concat(chunks),
        closed,
        drip(byte, everyMs) {
          timer = setInterval(() => {
            if (!socket.destroyed) socket.write(byte);
          }, everyMs);
        },
      }),
    );
    socket.once('error', reject);
  });
}

const within = <T>(p: Promise<T>, ms: number) => Promise.race([p, new Promise<'still open'>((r) => setTimeout(() => r('still open'), ms))]);

describe('slow and greedy clients', () => {
  let gw: TestGateway;
  let port: number;
  let key: string;
  const opened: Held[] = [];

  beforeAll(async () => {
    gw = await startGateway({ server: { host: '127.0.0.1', port: 0, request_timeout_ms: 1500, headers_timeout_ms: 1000, max_connections_per_client: 6 } });
    port = Number(new URL(gw.url).port);
    key = (await gw.createKey()).key;
  });

  afterAll(async () => {
    for (const h of opened) h.socket.destroy();
    await gw?.close();
  });

  async function track(): Promise<Held> {
    const h = await open(port);
    opened.push(h);
    return h;
  }

  it('drops a request whose body drips in a byte at a time', async () => {
    const h = await track();
    h.socket.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{`);
    h.drip(' ', 300);
    const ms = await within(h.closed, 6000);
    expect(ms).not.toBe('still open');
    expect(ms as number).toBeLessThan(4000);
  });

  it('drops a client whose headers never end', async () => {
    const h = await track();
    h.socket.write('GET /v1/models HTTP/1.1\r\nHost: x\r\n');
    h.drip('X', 300);
    const ms = await within(h.closed, 6000);
    expect(ms).not.toBe('still open');
    expect(ms as number).toBeLessThan(4000);
  });

  it('answers 401 with Connection: close and closes, instead of reading a body it will not use', async () => {
    const h = await track();
    h.socket.write('POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer mg-wrongwrongwrongwrongwrongwrongwrongwrongwrong\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"a":');
    h.drip(' ', 200);
    const ms = await within(h.closed, 6000);
    expect(ms).not.toBe('still open');
    // Closed right after the answer, long before the request timeout.
    expect(ms as number).toBeLessThan(1000);
    const res = parseResponse(h.received());
    expect(res.status).toBe(401);
    expect(res.headers.connection).toBe('close');
  });

  it('keeps a keep-alive connection open after a request whose body was read', async () => {
    const h = await track();
    const body = JSON.stringify({ model: 'nope', messages: [] });
    h.socket.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    await within(h.closed, 800);
    expect(h.socket.destroyed).toBe(false);
    expect(h.received().toString('latin1')).toMatch(/^HTTP\/1\.1 (400|404)/);
    expect(h.received().toString('latin1')).not.toMatch(/connection: close/i);
  });

  it('keeps the connection of a bodiless request answered at once (GET /v1/models, a key without limits) open for the next request', async () => {
    // Every hook of this request runs synchronously: the answer goes out before Node has marked the
    // request complete, which must not read as "a body left unread".
    const unlimited = (await gw.createKey({ rpm: 0, concurrency: 0 })).key;
    const h = await track();
    const get = `GET /v1/models HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${unlimited}\r\n\r\n`;
    h.socket.write(get);
    const answers = () => h.received().toString('latin1').match(/HTTP\/1\.1 200 /g)?.length ?? 0;
    await eventually(() => /\r\n\r\n\{"object":"list"[\s\S]*\}$/.test(h.received().toString('latin1')), 5000, 'the first answer');
    expect(h.received().toString('latin1')).not.toMatch(/connection: close/i);
    const first = h.received().length;
    h.socket.write(get);
    await eventually(() => answers() === 2 && h.received().length >= first * 2 - 2, 5000, 'the second answer on the same connection');
    expect(h.socket.destroyed).toBe(false);
  });

  it('refuses connections of one address beyond max_connections_per_client, and accepts again when one closes', async () => {
    for (const h of opened) h.socket.destroy();
    await new Promise((r) => setTimeout(r, 200));
    const six = await Promise.all(Array.from({ length: 6 }, () => track()));
    const seventh = await track();
    expect(await within(seventh.closed, 2000)).not.toBe('still open');
    for (const h of six) expect(h.socket.destroyed).toBe(false);
    six[0].socket.destroy();
    await new Promise((r) => setTimeout(r, 200));
    const again = await track();
    again.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    await within(again.closed, 3000);
    expect(parseResponse(again.received()).status).toBe(200);
  });
});

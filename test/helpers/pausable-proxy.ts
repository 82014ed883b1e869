import { createServer, connect, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy to `target` that can stop forwarding bytes while keeping every connection open: the
 * server behind it then looks hung (it accepts, and never answers), without touching the server.
 */
export interface PausableProxy {
  port: number;
  pause(): void;
  resume(): void;
  close(): Promise<void>;
}

export async function startPausableProxy(targetHost: string, targetPort: number): Promise<PausableProxy> {
  const pairs = new Set<[Socket, Socket]>();
  const flushers = new Set<() => void>();
  let paused = false;
  const server: Server = createServer((client) => {
    const upstream = connect(targetPort, targetHost);
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    // Bytes are forwarded by hand so a pause holds them back for sure (pipe() resumes on drain).
    const held: Array<[Socket, Buffer]> = [];
    const forward = (to: Socket) => (chunk: Buffer) => {
      if (paused) held.push([to, chunk]);
      else to.write(chunk);
    };
    client.on('data', forward(upstream));
    upstream.on('data', forward(client));
    flushers.add(() => {
      for (const [to, chunk] of held.splice(0)) to.write(chunk);
    });
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : 0,
    pause() {
      paused = true;
    },
    resume() {
      paused = false;
      for (const flush of flushers) flush();
    },
    async close() {
      for (const [a, b] of pairs) {
        a.destroy();
        b.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

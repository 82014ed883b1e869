import { createServer, type IncomingHttpHeaders } from 'node:http';

export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  body: string;
  /** The status the receiver answered. */
  answered: number;
}

/**
 * A webhook receiver on a loopback port 0: records every request and answers the next status of
 * `script` (200 once the script runs out).
 */
export async function startReceiver(script: number[] = []): Promise<{ url: string; received: ReceivedWebhook[]; close(): Promise<void> }> {
  const received: ReceivedWebhook[] = [];
  const queue = [...script];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const answered = queue.length ? queue.shift()! : 200;
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), answered });
      res.writeHead(answered, { 'content-type': 'text/plain' });
      res.end(answered === 200 ? 'ok' : 'not now');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}/hooks/video`,
    received,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** The headers a Standard Webhooks verifier takes. */
export function webhookHeaders(h: IncomingHttpHeaders): Record<string, string> {
  return { 'webhook-id': String(h['webhook-id']), 'webhook-timestamp': String(h['webhook-timestamp']), 'webhook-signature': String(h['webhook-signature']) };
}

import type { FastifyInstance } from 'fastify';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { errorBody, errors, familyHeaders, familyOf } from './errors.js';

// While the app closes (SIGTERM, SIGINT), the listening socket is closed and idle keep-alive
// connections are dropped; a request can still arrive on a connection that was busy when closing
// began (a proxy's pooled connection). It is answered here, before any route: 503
// `shutting_down` in the error shape of its path's family (an SDK reads it like any other error
// and retries a 503 itself), `Retry-After: 1`, and the connection closed after the answer.
// Fastify's own answer for this case (return503OnClosing) has a body of its own shape, so the app
// answers it first, and Fastify's stays behind this as a fallback only.

/** Put in front of every request listener the app's server has when this is called. */
export function answerWhileClosing(app: FastifyInstance): void {
  const server = app.server;
  const inner = server.listeners('request') as ((req: IncomingMessage, res: ServerResponse) => void)[];
  if (inner.length !== 1) return;
  const next = inner[0];
  let closing = false;
  // Fastify marks itself closing before the preClose hooks run; from here on every request is refused.
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  server.removeListener('request', next);
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (!closing) return next(req, res);
    const err = errors.shuttingDown();
    const family = familyOf(req.url ?? '');
    const text = JSON.stringify(errorBody(family, err));
    res.writeHead(err.status, {
      ...familyHeaders(family),
      ...err.headers,
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(text),
      connection: 'close',
    });
    res.end(text);
  });
}

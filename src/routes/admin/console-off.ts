import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError } from '../../http/errors.js';

// With the admin API off, /console and /admin/api/ answer how to turn it on instead of a bare 404:
// a short page for a browser, the admin family's JSON error for anything else.

const HOW = 'The admin API and console are off. Start the gateway with MEDIAGATE_ADMIN_ENABLED=true (e.g. `MEDIAGATE_ADMIN_ENABLED=true npm start`), or set admin.enabled: true in its config file; then create a token with `npx mediagate admin create --name NAME` and log in with it.';

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>mediagate console is off</title></head>
<body style="font-family:system-ui,sans-serif;max-width:40rem;margin:3rem auto;line-height:1.5">
<h1>The console is off</h1>
<p>The admin API and console of this gateway are not enabled. To turn them on:</p>
<ol>
<li>Start the gateway with <code>MEDIAGATE_ADMIN_ENABLED=true</code>, e.g. <code>MEDIAGATE_ADMIN_ENABLED=true npm start</code>
(or set <code>admin.enabled: true</code> in its config file).</li>
<li>Create an admin token: <code>npx mediagate admin create --name NAME</code> (it is printed once).</li>
<li>Reload this page and log in with the token.</li>
</ol>
<p>See docs/console.md.</p>
</body></html>
`;

export function registerConsoleOffRoutes(app: FastifyInstance): void {
  const answer = async (request: FastifyRequest, reply: FastifyReply) => {
    const browser = request.method === 'GET' && /\btext\/html\b/.test(request.headers.accept ?? '');
    if (browser) return reply.code(404).header('content-type', 'text/html; charset=utf-8').header('cache-control', 'no-store').send(PAGE);
    throw new GatewayError(404, 'admin_disabled', HOW);
  };
  const hide = { schema: { hide: true } };
  for (const url of ['/console', '/console/', '/console/*', '/admin/api/*']) app.route({ method: ['GET', 'POST', 'PATCH', 'PUT', 'DELETE'], url, ...hide, handler: answer });
}

import type { Routes } from '../pipeline/gateway.js';
import type { Store } from '../store/db.js';

export function registerHealthRoutes(app: Routes, store: Store): void {
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_req, reply) => {
    const ok = await store.ping();
    return reply.code(ok ? 200 : 503).send({ status: ok ? 'ready' : 'database unreachable' });
  });
}

import pino, { type DestinationStream } from 'pino';
import { registerHealthRoutes } from './routes/health.js';
import { registerModelRoutes } from './routes/models.js';
import { registerImageRoutes } from './routes/images.js';
import { registerChatRoutes } from './routes/chat.js';
import { registerMessagesRoutes } from './routes/messages.js';
import { registerResponsesRoutes } from './routes/responses.js';
import { registerGeminiRoutes } from './routes/gemini.js';
import { registerVideoRoutes } from './routes/video.js';
import { registerVideoLifecycleRoutes } from './routes/video-lifecycle.js';
import { registerVideosApiRoutes } from './routes/videos.js';
import { capConnectionsPerClient, serverTimeoutOptions } from './http/connection-guards.js';
import { Gateway } from './pipeline/gateway.js';
import type { Services } from './services.js';
import { createAdmin, type AdminHooks } from './admin/index.js';
import { registerAdminRoutes, type AdminRouteOptions } from './routes/admin/index.js';
import { registerConsoleOffRoutes } from './routes/admin/console-off.js';

export interface AppOptions {
  /** Where log lines go (tests capture them); stdout when absent. */
  logStream?: DestinationStream;
  /**
   * Which routes this listener serves: the model endpoints (`public`), the admin API and console
   * (`admin`, for admin.listen), or both. Default: both when admin.enabled without admin.listen.
   */
  surface?: 'public' | 'admin' | 'all';
  admin?: AdminRouteOptions & AdminHooks;
}

/** Video task ids may be 128 characters; a longer path parameter is answered 400 before routing. */
const MAX_PARAM_LENGTH = 256;

export function buildApp(services: Services, opts: AppOptions = {}): Gateway {
  const { config } = services;
  const bodyLimit = Math.floor(config.server.body_limit_mb * 1024 * 1024);
  const log = pino(
    {
      level: config.log.level,
      // Keys must never reach a log line, whatever a future log call includes.
      redact: { paths: ['req.headers.authorization', 'req.headers["x-api-key"]', 'req.headers["x-goog-api-key"]', 'req.headers.cookie', 'headers.authorization', 'headers["x-api-key"]', 'headers["x-goog-api-key"]', 'headers.cookie'], censor: '[redacted]' },
    },
    opts.logStream ?? pino.destination(1),
  );
  const app = new Gateway(
    { authenticator: services.authenticator, limits: { limits: services.limits, ledger: services.ledger }, ledger: services.ledger, metrics: services.metrics, bodyLimit, requestLogs: services.requestLogs, idempotency: services.idempotency },
    { log, server: serverTimeoutOptions(config.server), maxParamLength: MAX_PARAM_LENGTH },
  );
  capConnectionsPerClient(app.server, config.server);

  registerHealthRoutes(app, services.store);
  app.get('/metrics', async (_request, reply) => {
    const { contentType, text } = await services.metrics.exposition();
    return reply.header('content-type', contentType).send(text);
  });
  const surface = opts.surface ?? (config.admin.enabled && !config.admin.listen ? 'all' : 'public');
  if (surface !== 'admin') {
    registerModelRoutes(app, services.catalog, services.config);
    registerImageRoutes(app, services);
    registerChatRoutes(app, services);
    registerMessagesRoutes(app, services);
    registerResponsesRoutes(app, services);
    registerGeminiRoutes(app, services);
    registerVideoRoutes(app, services.tasks.service, services.config);
    registerVideoLifecycleRoutes(app, services);
    registerVideosApiRoutes(app, services);
  }
  if (surface !== 'public') registerAdminRoutes(app, services, createAdmin(services, opts.admin), opts.admin);
  else if (!config.admin.enabled) registerConsoleOffRoutes(app);
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.openapi());
  return app;
}

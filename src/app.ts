import Fastify, { LogController, type FastifyInstance, type FastifyError } from 'fastify';
import type { DestinationStream } from 'pino';
import { registerAuth } from './auth/hook.js';
import { GatewayError } from './http/errors.js';
import { errorAnswer } from './http/error-answer.js';
import { installFrontDoor, type FrontAjv } from './front-door.js';
import { answerWhileClosing } from './http/closing.js';
import { frontModels, registerModelRoutes } from './routes/models.js';
import { registerHealthRoutes } from './routes/health.js';
import { registerImageRoutes } from './routes/images.js';
import { frontChat, registerChatRoutes } from './routes/chat.js';
import { registerMessagesRoutes } from './routes/messages.js';
import { registerResponsesRoutes } from './routes/responses.js';
import { registerGeminiRoutes } from './routes/gemini.js';
import { frontTaskRead, registerVideoRoutes } from './routes/video.js';
import { registerVideoLifecycleRoutes } from './routes/video-lifecycle.js';
import { registerVideosApiRoutes } from './routes/videos.js';
import { registerRateLimits } from './limits/hook.js';
import { registerUsageBackstop } from './limits/usage-backstop.js';
import { registerRouteErrors } from './http/route-table.js';
import { registerRequestGuards } from './http/request-guards.js';
import { registerConnectionGuards, serverTimeoutOptions } from './http/connection-guards.js';
import { clientGone, registerDepartureSignal } from './http/departure.js';
import { renderClientError, renderFrameworkError } from './http/framework-errors.js';
import swagger from '@fastify/swagger';
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

export function buildApp(services: Services, opts: AppOptions = {}): FastifyInstance {
  const { config } = services;
  const bodyLimit = Math.floor(config.server.body_limit_mb * 1024 * 1024);
  // Fastify's Ajv, kept so the front door validates with the very functions Fastify compiled.
  let ajv: FrontAjv | null = null;
  const app = Fastify({
    logger: {
      level: config.log.level,
      // Keys must never reach a log line, whatever a future log call includes.
      redact: { paths: ['req.headers.authorization', 'req.headers["x-api-key"]', 'req.headers["x-goog-api-key"]', 'req.headers.cookie', 'headers.authorization', 'headers["x-api-key"]', 'headers["x-goog-api-key"]', 'headers.cookie'], censor: '[redacted]' },
      ...(opts.logStream ? { stream: opts.logStream } : {}),
    },
    // Per-request log lines cost throughput; the usage ledger records every request instead.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit,
    ...serverTimeoutOptions(config.server),
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    // Video task ids may be 128 characters; longer path parameters are answered by renderFrameworkError.
    routerOptions: { maxParamLength: 256 },
    frameworkErrors: renderFrameworkError,
    clientErrorHandler: renderClientError,
    ajv: {
      customOptions: { removeAdditional: false, coerceTypes: false, allErrors: false },
      onCreate: (instance) => {
        ajv = instance as unknown as FrontAjv;
      },
    },
  });

  app.setErrorHandler((err: FastifyError | GatewayError, request, reply) => {
    // The client left (its body broke off): nobody to answer, one 499 row.
    if (clientGone(request)) {
      backstop.departed(request);
      return reply;
    }
    const answer = errorAnswer(err, request.url, request.log);
    for (const k in answer.headers) reply.header(k, answer.headers[k]);
    return reply.code(answer.status).send(answer.body);
  });

  // Before any route: it collects them all, for 405 answers.
  registerRouteErrors(app);
  registerDepartureSignal(app);
  registerRequestGuards(app, bodyLimit);
  registerConnectionGuards(app, config.server);
  registerAuth(app, services.authenticator);
  const limits = registerRateLimits(app, services.limits, services.ledger);
  const backstop = registerUsageBackstop(app, services.ledger);
  services.metrics.instrument(app);
  // Routes go in a plugin loaded after @fastify/swagger, so /openapi.json describes every one.
  app.register(swagger, {
    openapi: { info: { title: 'mediagate', version: '0.1.0', description: 'Gateway to generative models: chat, images and video tasks.' } },
  });
  const surface = opts.surface ?? (config.admin.enabled && !config.admin.listen ? 'all' : 'public');
  app.register(async (api) => {
    registerHealthRoutes(api, services.store);
    if (surface !== 'admin') {
      registerModelRoutes(api, services.catalog);
      registerImageRoutes(api, services);
      registerChatRoutes(api, services);
      registerMessagesRoutes(api, services);
      registerResponsesRoutes(api, services);
      registerGeminiRoutes(api, services);
      registerVideoRoutes(api, services.tasks.service, services.config);
      registerVideoLifecycleRoutes(api, services);
      registerVideosApiRoutes(api, services);
    }
    if (surface !== 'public') registerAdminRoutes(api, services, createAdmin(services, opts.admin), opts.admin);
    else if (!config.admin.enabled) registerConsoleOffRoutes(api);
    api.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  });
  // The hottest routes' plain requests skip Fastify's request cycle (src/front-door.ts).
  if (surface !== 'admin') {
    const deps = { authenticator: services.authenticator, limits, ledger: services.ledger, metrics: services.metrics, bodyLimit, ajv: () => ajv };
    installFrontDoor(app, deps, [frontModels(services.catalog), frontChat(services), frontTaskRead(services.tasks.service, services.config)]);
  }
  // Last, so it is in front of the front door too: requests that arrive while the app closes.
  answerWhileClosing(app);
  return app;
}

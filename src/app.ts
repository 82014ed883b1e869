import Fastify, { LogController, type FastifyInstance, type FastifyError } from 'fastify';
import type { DestinationStream } from 'pino';
import { registerAuth } from './auth/hook.js';
import { redact } from './http/redact.js';
import { GatewayError, errorBody, errors, familyOf } from './http/errors.js';
import { registerModelRoutes } from './routes/models.js';
import { registerHealthRoutes } from './routes/health.js';
import { registerImageRoutes } from './routes/images.js';
import { registerChatRoutes } from './routes/chat.js';
import { registerMessagesRoutes } from './routes/messages.js';
import { registerResponsesRoutes } from './routes/responses.js';
import { registerGeminiRoutes } from './routes/gemini.js';
import { registerVideoRoutes } from './routes/video.js';
import { registerVideoLifecycleRoutes } from './routes/video-lifecycle.js';
import { registerVideosApiRoutes } from './routes/videos.js';
import { registerRateLimits } from './limits/hook.js';
import { registerUsageBackstop } from './limits/usage-backstop.js';
import { registerRouteErrors } from './http/route-table.js';
import { validationMessage, type SchemaError } from './http/validation-message.js';
import { registerRequestGuards, tooLarge } from './http/request-guards.js';
import { registerConnectionGuards, serverTimeoutOptions } from './http/connection-guards.js';
import { clientGone, registerDepartureSignal } from './http/departure.js';
import { renderClientError, renderFrameworkError } from './http/framework-errors.js';
import swagger from '@fastify/swagger';
import type { Services } from './services.js';
import { createAdmin, type AdminHooks } from './admin/index.js';
import { registerAdminRoutes, type AdminRouteOptions } from './routes/admin/index.js';

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
  const app = Fastify({
    logger: {
      level: config.log.level,
      // Keys must never reach a log line, whatever a future log call includes.
      redact: { paths: ['req.headers.authorization', 'req.headers["x-api-key"]', 'req.headers["x-goog-api-key"]', 'req.headers.cookie', 'headers.authorization', 'headers["x-api-key"]', 'headers["x-goog-api-key"]', 'headers.cookie'], censor: '[redacted]' },
      ...(opts.logStream ? { stream: opts.logStream } : {}),
    },
    // Per-request log lines cost throughput; the usage ledger records every request instead.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: Math.floor(config.server.body_limit_mb * 1024 * 1024),
    ...serverTimeoutOptions(config.server),
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    // Video task ids may be 128 characters; longer path parameters are answered by renderFrameworkError.
    routerOptions: { maxParamLength: 256 },
    frameworkErrors: renderFrameworkError,
    clientErrorHandler: renderClientError,
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, allErrors: false } },
  });

  app.setErrorHandler((err: FastifyError | GatewayError, request, reply) => {
    // The client left (its body broke off): nobody to answer, one 499 row.
    if (clientGone(request)) {
      backstop.departed(request);
      return reply;
    }
    const g = toGatewayError(err);
    // The message may quote client input (a pasted key): scrub it like an answer.
    if (g.status >= 500) request.log.error({ err: { message: redact(err.message), code: (err as FastifyError).code } }, 'request failed');
    for (const [k, v] of Object.entries(g.headers)) reply.header(k, v);
    return reply.code(g.status).send(errorBody(familyOf(request.url), g));
  });

  // Before any route: it collects them all, for 405 answers.
  registerRouteErrors(app);
  registerDepartureSignal(app);
  registerRequestGuards(app, Math.floor(config.server.body_limit_mb * 1024 * 1024));
  registerConnectionGuards(app, config.server);
  registerAuth(app, services.authenticator);
  registerRateLimits(app, services.limits, services.ledger);
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
    api.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  });
  return app;
}

/** Maps anything thrown in a request to the gateway's status table. */
export function toGatewayError(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  const e = err as FastifyError & { validation?: SchemaError[]; validationContext?: string };
  if (e && Array.isArray(e.validation)) return new GatewayError(400, 'invalid_request', `Invalid request: ${validationMessage(e.validationContext ?? 'body', e.validation)}.`);
  switch (e?.code) {
    // The store's DatabaseUnavailableError: a restart, failover, hang or lock; the client may retry.
    case 'database_unavailable':
      return errors.databaseUnavailable();
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return tooLarge();
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new GatewayError(400, 'invalid_request', 'The request body must be JSON (Content-Type: application/json).');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new GatewayError(400, 'invalid_request', 'The request body is empty; a JSON object is required.');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new GatewayError(400, 'invalid_request', 'The Content-Length header does not match the body.');
    default:
      break;
  }
  const status = typeof e?.statusCode === 'number' ? e.statusCode : 500;
  if (status >= 400 && status < 500) {
    // Limits enforced by plugins (multipart file and part sizes) say 413 too.
    if (status === 413) return tooLarge();
    // Fastify's own 4xx (bad JSON, bad headers, …): keep the status, give a clean message.
    const message = e.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || /JSON/i.test(e.message ?? '') ? 'The request body is not valid JSON.' : 'Bad request.';
    return new GatewayError(status, 'invalid_request', message);
  }
  return new GatewayError(500, 'internal_error', 'The gateway failed to handle this request.');
}

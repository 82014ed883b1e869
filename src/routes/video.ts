import type { FastifyInstance } from 'fastify';
import { principalOf } from '../auth/hook.js';
import { markUsageRecorded } from '../limits/usage-backstop.js';
import type { TaskService } from '../tasks/service.js';
import { TaskEnvelopeSchema, envelope } from '../tasks/record.js';
import type { Config } from '../config/schema.js';
import { baseForRequest, presentRecord } from '../tasks/content/gateway-url.js';

/**
 * Video tasks: POST /v1/video/generations creates one, GET /v1/video/generations/{task_id} reads
 * it (docs/video.md). Both answer {"code":"success","message":"","data":TaskRecord}; errors are
 * {"code","message","data":null} (the app's error handler renders the video family).
 */
export function registerVideoRoutes(app: FastifyInstance, tasks: TaskService, config: Pick<Config, 'server' | 'storage'>): void {
  const response = { 200: TaskEnvelopeSchema };

  app.post('/v1/video/generations', { config: { auth: true }, schema: { response } }, async (request) =>
    envelope(await tasks.create(principalOf(request), request.body, () => markUsageRecorded(request))),
  );

  app.get<{ Params: { task_id: string } }>('/v1/video/generations/:task_id', { config: { auth: true }, schema: { response } }, async (request) =>
    envelope(presentRecord(config, await tasks.read(principalOf(request), request.params.task_id), baseForRequest(config, request))),
  );
}

import type { FastifyInstance } from 'fastify';
import { principalOf } from '../auth/hook.js';
import { claimUsageRow } from '../limits/usage-backstop.js';
import type { TaskService } from '../tasks/service.js';
import { TaskEnvelopeSchema, envelope } from '../tasks/record.js';
import type { Config } from '../config/schema.js';
import { baseForRequest } from '../tasks/content/gateway-url.js';
import { TaskAnswers } from '../tasks/read-answer.js';

/**
 * Video tasks: POST /v1/video/generations creates one, GET /v1/video/generations/{task_id} reads
 * it (docs/video.md). Both answer {"code":"success","message":"","data":TaskRecord}; errors are
 * {"code","message","data":null} (the app's error handler renders the video family).
 */
export function registerVideoRoutes(app: FastifyInstance, tasks: TaskService, config: Pick<Config, 'server' | 'storage'>): void {
  const response = { 200: TaskEnvelopeSchema };

  app.post('/v1/video/generations', { config: { auth: true }, schema: { response } }, async (request) =>
    envelope(await tasks.create(principalOf(request), request.body, () => claimUsageRow(request), request.departed)),
  );

  // Every client's polling: the answer's bytes are kept per task version (tasks/read-answer.ts).
  const answers = new TaskAnswers(config);
  app.get<{ Params: { task_id: string } }>('/v1/video/generations/:task_id', { config: { auth: true }, schema: { response } }, async (request, reply) => {
    const view = await tasks.view(principalOf(request), request.params.task_id);
    const json = answers.json(view, baseForRequest(config, request), (answer) => reply.serialize(answer) as string);
    return reply.type('application/json; charset=utf-8').send(json);
  });
}

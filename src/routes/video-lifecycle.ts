import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { principalOf } from '../auth/hook.js';
import type { Services } from '../services.js';
import { TaskRecordSchema } from '../tasks/record.js';
import { TaskLister } from '../tasks/list.js';
import { TaskListRepo } from '../store/repos/task-list.js';

const TaskPageEnvelope = Type.Object(
  {
    code: Type.String(),
    message: Type.String(),
    data: Type.Object({ tasks: Type.Array(TaskRecordSchema), has_more: Type.Boolean(), next_after: Type.Union([Type.String(), Type.Null()]) }, { additionalProperties: false }),
  },
  { additionalProperties: false },
);

/**
 * What a client does with its tasks besides create and read: list them (newest first, by cursor).
 * Errors render in the video family ({"code","message","data":null}) like every /v1/video/ path.
 */
export function registerVideoLifecycleRoutes(app: FastifyInstance, services: Services): void {
  const lister = new TaskLister(new TaskListRepo(services.store.db));

  app.get<{ Querystring: Record<string, unknown> }>(
    '/v1/video/generations',
    { config: { auth: true }, schema: { response: { 200: TaskPageEnvelope } } },
    async (request) => ({ code: 'success', message: '', data: await lister.list(principalOf(request).keyId, request.query ?? {}) }),
  );
}

import type { Routes } from '../pipeline/gateway.js';
import { principalOf } from '../auth/hook.js';
import { claimUsageRow } from '../limits/usage-backstop.js';
import type { TaskService } from '../tasks/service.js';
import fastJson from 'fast-json-stringify';
import { TaskEnvelopeSchema, envelope, type TaskEnvelope } from '../tasks/record.js';
import type { TaskView } from '../store/repos/tasks.js';
import type { GatewayRequest, Reply } from '../pipeline/request.js';
import type { Config } from '../config/schema.js';
import { baseForRequest } from '../tasks/content/gateway-url.js';
import { TaskAnswers } from '../tasks/read-answer.js';

/**
 * Video tasks: POST /v1/video/generations creates one, GET /v1/video/generations/{task_id} reads
 * it (docs/video.md). Both answer {"code":"success","message":"","data":TaskRecord}; errors are
 * {"code","message","data":null} (the app's error handler renders the video family).
 */
export function registerVideoRoutes(app: Routes, tasks: TaskService, config: Pick<Config, 'server' | 'storage'>): void {
  const response = { 200: TaskEnvelopeSchema };

  app.post('/v1/video/generations', { auth: true, billable: 'video', idempotent: true, schema: { response } }, async (request) =>
    envelope(await tasks.create(principalOf(request), request.body, () => claimUsageRow(request), request.departed, request.trace)),
  );

  const read = taskReader(tasks, config);
  app.get<{ Params: { task_id: string } }>('/v1/video/generations/:task_id', { auth: true, schema: { response } }, read);
}

// The answer's serializer, compiled once from the route's response schema (the bytes the pipeline's
// own serializer would make for it), used on the answer kept per task version.
const serializeEnvelope = fastJson(TaskEnvelopeSchema) as (answer: TaskEnvelope) => string;

/** GET /v1/video/generations/{task_id}. */
function taskReader(tasks: TaskService, config: Pick<Config, 'server' | 'storage'>) {
  // Every client's polling: the answer's bytes are kept per task version (tasks/read-answer.ts).
  const answers = new TaskAnswers(config);
  const answer = (request: GatewayRequest, reply: Reply, view: TaskView) =>
    reply.header('content-type', 'application/json; charset=utf-8').send(answers.json(view, baseForRequest(config, request), serializeEnvelope));
  return async (request: GatewayRequest, reply: Reply): Promise<Reply> => answer(request, reply, await tasks.view(principalOf(request), request.params.task_id ?? ''));
}

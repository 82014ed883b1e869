import type { FastifyInstance } from 'fastify';
import { principalOf } from '../auth/hook.js';
import { claimUsageRow } from '../limits/usage-backstop.js';
import type { TaskService } from '../tasks/service.js';
import fastJson from 'fast-json-stringify';
import { TaskEnvelopeSchema, envelope, type TaskEnvelope } from '../tasks/record.js';
import type { TaskView } from '../store/repos/tasks.js';
import type { ExchangeReply, ExchangeRequest, FrontRoute } from './exchange.js';
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

  app.post('/v1/video/generations', { config: { auth: true, billable: 'video' }, schema: { response } }, async (request) =>
    envelope(await tasks.create(principalOf(request), request.body, () => claimUsageRow(request), request.departed)),
  );

  const read = taskReader(tasks, config);
  // A synchronous answer is already sent: nothing is returned for Fastify to send again.
  app.get<{ Params: { task_id: string } }>('/v1/video/generations/:task_id', { config: { auth: true }, schema: { response } }, (request, reply) => {
    const answered = read(request, reply);
    return answered instanceof Promise ? answered : undefined;
  });
}

/** The plain form of a task read, served by the front door (src/front-door.ts). */
export function frontTaskRead(tasks: TaskService, config: Pick<Config, 'server' | 'storage'>): FrontRoute {
  const read = taskReader(tasks, config);
  return { method: 'GET', url: '/v1/video/generations/:task_id', handle: (request, reply) => read(request, reply) };
}

// The answer's serializer, compiled once from the route's response schema (the bytes Fastify's own
// serializer would make for it), shared by both doors.
const serializeEnvelope = fastJson(TaskEnvelopeSchema) as (answer: TaskEnvelope) => string;

type TaskReadRequest = ExchangeRequest & { params: Record<string, string>; protocol: string; host: string };

/** GET /v1/video/generations/{task_id}, for either door. */
function taskReader(tasks: TaskService, config: Pick<Config, 'server' | 'storage'>) {
  // Every client's polling: the answer's bytes are kept per task version (tasks/read-answer.ts).
  const answers = new TaskAnswers(config);
  const answer = (request: TaskReadRequest, reply: ExchangeReply, view: TaskView) =>
    reply.header('content-type', 'application/json; charset=utf-8').send(answers.json(view, baseForRequest(config, request), serializeEnvelope));
  // Answered without a promise when the row was read synchronously (SQLite): the front door then
  // writes the answer inside the request's own event. A refusal is thrown (both doors catch it).
  return (request: TaskReadRequest, reply: ExchangeReply): ExchangeReply | Promise<ExchangeReply> => {
    const view = tasks.viewNow(principalOf(request), request.params.task_id ?? '');
    return view instanceof Promise ? view.then((v) => answer(request, reply, v)) : answer(request, reply, view);
  };
}

import type { Routes } from '../pipeline/gateway.js';
import type { Reply, GatewayRequest } from '../pipeline/request.js';
import type { VideoContent } from '../tasks/content/video-content.js';
import type { VideoStream } from '../tasks/content/provider-source.js';
import { Type } from '@sinclair/typebox';
import { principalOf } from '../auth/hook.js';
import type { Services } from '../services.js';
import { TaskEnvelopeSchema, TaskRecordSchema, envelope } from '../tasks/record.js';
import { CALLBACK_PATH } from '../tasks/provider-callbacks.js';
import { baseForRequest, presentRecord } from '../tasks/content/gateway-url.js';

const TaskPageEnvelope = Type.Object(
  {
    code: Type.String(),
    message: Type.String(),
    data: Type.Object({ tasks: Type.Array(TaskRecordSchema), has_more: Type.Boolean(), next_after: Type.Union([Type.String(), Type.Null()]) }, { additionalProperties: false }),
  },
  { additionalProperties: false },
);

/**
 * What a client does with its tasks besides create and read: list them (newest first, by cursor)
 * and download the finished video. Errors render in the video family ({"code","message","data":null})
 * like every /v1/video/ path.
 */
export function registerVideoLifecycleRoutes(app: Routes, services: Services): void {
  const { lister, content } = services.lifecycle;
  const { config } = services;
  const { canceller } = services.tasks;

  app.post<{ Params: { task_id: string } }>('/v1/video/generations/:task_id/cancel', { auth: true, schema: { response: { 200: TaskEnvelopeSchema } } }, async (request) =>
    envelope(presentRecord(config, await canceller.cancel(principalOf(request), request.params.task_id), baseForRequest(config, request))),
  );

  app.get<{ Querystring: Record<string, unknown> }>(
    '/v1/video/generations',
    { auth: true, schema: { response: { 200: TaskPageEnvelope } } },
    async (request) => {
      const page = await lister.list(principalOf(request).keyId, request.query ?? {});
      const base = baseForRequest(config, request);
      return { code: 'success', message: '', data: { ...page, tasks: page.tasks.map((t) => presentRecord(config, t, base)) } };
    },
  );

  // A provider's callback (no key: the unguessable token in the path is the credential). Only a
  // hint to poll the task now; the body is never trusted.
  app.post<{ Params: { token: string } }>(`${CALLBACK_PATH}:token`, { bodyLimit: 256 * 1024 }, async (request) =>
    services.tasks.callbacks.receive(request.params.token, request.body),
  );

  app.get<{ Params: { task_id: string } }>('/v1/video/generations/:task_id/content', { auth: true }, async (request, reply) =>
    sendVideo(content, request, reply, request.params.task_id),
  );
}

/** Streams a finished task's video to its owner (Range passed on); also GET /v1/videos/{id}/content. */
export async function sendVideo(content: VideoContent, request: GatewayRequest, reply: Reply, taskId: string): Promise<Reply> {
  const abort = new AbortController();
  // A client that goes away stops the provider download too.
  request.raw.once('close', () => abort.abort());
  const range = typeof request.headers.range === 'string' ? request.headers.range : undefined;
  const video = await content.open(principalOf(request), taskId, range, abort.signal);
  return replyWithVideo(reply, video);
}

/** Sends a video stream with its status and headers (the public /content routes and the admin API's). */
export function replyWithVideo(reply: Reply, video: VideoStream): Reply {
  reply.code(video.status).header('content-type', video.contentType).header('accept-ranges', 'bytes');
  if (video.contentLength !== undefined) reply.header('content-length', video.contentLength);
  if (video.contentRange !== undefined) reply.header('content-range', video.contentRange);
  return reply.send(video.body);
}

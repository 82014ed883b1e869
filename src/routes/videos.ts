import type { Routes } from '../pipeline/gateway.js';
import type { GatewayRequest } from '../pipeline/request.js';
import { Type } from '@sinclair/typebox';
import { principalOf } from '../auth/hook.js';
import { GatewayError, errors } from '../http/errors.js';
import { limitModel } from '../pipeline/steps.js';
import { claimUsageRow, noteUsageModel } from '../limits/usage-backstop.js';
import type { Services } from '../services.js';
import { VideoObjectSchema, toVideoObject } from '../tasks/openai-videos.js';
import { ownedTask } from '../tasks/request.js';
import { busboyLimits, discardRest } from './image-upload.js';
import { readVideoForm } from './video-form.js';
import { sendVideo } from './video-lifecycle.js';

// The OpenAI Videos API over the gateway's video tasks (docs/video.md, "Videos API"): create,
// retrieve, list, delete and download, in OpenAI's shapes; errors in OpenAI's error shape (the
// /v1/ family). A video is a task: the same id reads it at /v1/video/generations/{id}.

const VideoPageSchema = Type.Object(
  {
    object: Type.Literal('list'),
    data: Type.Array(VideoObjectSchema),
    first_id: Type.Union([Type.String(), Type.Null()]),
    last_id: Type.Union([Type.String(), Type.Null()]),
    has_more: Type.Boolean(),
  },
  { additionalProperties: false },
);

const DeletedSchema = Type.Object({ id: Type.String(), object: Type.Literal('video.deleted'), deleted: Type.Boolean() }, { additionalProperties: false });

/**
 * Operations of the Videos API no provider here offers. The fixed paths take every method a video
 * id path does, so `DELETE /v1/videos/edits` names the operation rather than a video called "edits".
 */
const UNSUPPORTED: { methods: ('GET' | 'POST' | 'DELETE')[]; url: string; name: string }[] = [
  { methods: ['POST'], url: '/v1/videos/:video_id/remix', name: '/v1/videos/{video_id}/remix (remix)' },
  { methods: ['GET', 'POST', 'DELETE'], url: '/v1/videos/edits', name: '/v1/videos/edits (edits)' },
  { methods: ['GET', 'POST', 'DELETE'], url: '/v1/videos/extensions', name: '/v1/videos/extensions (extensions)' },
  { methods: ['GET', 'POST', 'DELETE'], url: '/v1/videos/characters', name: '/v1/videos/characters (characters)' },
  { methods: ['GET'], url: '/v1/videos/characters/:character_id', name: '/v1/videos/characters/{character_id} (characters)' },
];

export function registerVideosApiRoutes(app: Routes, services: Services): void {
  const { tasks, lifecycle, config } = services;
  const retainDays = config.storage.type === 'none' ? 0 : config.storage.retain_days;
  const maxFileBytes = Math.floor(config.images.max_file_mb * 1024 * 1024);
  const limits = { maxFiles: 1, maxFileBytes, maxTotalBytes: maxFileBytes };
  const drainCapBytes = Math.max(Math.floor(config.server.body_limit_mb * 1024 * 1024), maxFileBytes);
  const video = { 200: VideoObjectSchema };

  const create = async (request: GatewayRequest, body: unknown) => {
    const row = await tasks.service.createVideo(principalOf(request), body, () => claimUsageRow(request), request.departed, request.trace);
    return toVideoObject(row, { retainDays });
  };

  // A multipart form is read on these routes only (the SDK always sends a form); JSON is taken too.
  const scope = app.scope({ multipart: busboyLimits(limits) });
  {
    scope.post('/v1/videos', { auth: true, billable: 'video', idempotent: true, schema: { response: video } }, async (request) => {
      if (!request.isMultipart()) return create(request, request.body);
      let body: Record<string, unknown>;
      try {
        body = await readVideoForm(request, maxFileBytes, async (model) => {
          noteUsageModel(request, model);
          await limitModel(request, model);
        });
      } catch (err) {
        discardRest(request, drainCapBytes);
        throw err;
      }
      return create(request, body);
    });

    // In this scope too: the SDK sends edits, extensions and characters as forms.
    for (const op of UNSUPPORTED) {
      scope.route({
        method: op.methods,
        url: op.url,
        auth: true,
        handler: async (request) => {
          discardRest(request, drainCapBytes);
          throw new GatewayError(400, 'unsupported', `${op.name} is not supported: no video provider of this gateway offers it.`);
        },
      });
    }
  }

  app.get<{ Params: { video_id: string } }>('/v1/videos/:video_id', { auth: true, schema: { response: video } }, async (request) =>
    toVideoObject(await ownedTask(tasks.repo, principalOf(request), request.params.video_id), { retainDays }),
  );

  app.get<{ Querystring: Record<string, unknown> }>('/v1/videos', { auth: true, schema: { response: { 200: VideoPageSchema } } }, async (request) =>
    lifecycle.videos.page(principalOf(request).keyId, request.query ?? {}),
  );

  app.delete<{ Params: { video_id: string } }>('/v1/videos/:video_id', { auth: true, schema: { response: { 200: DeletedSchema } } }, async (request) => {
    await lifecycle.deleter.delete(principalOf(request), request.params.video_id);
    return { id: request.params.video_id, object: 'video.deleted' as const, deleted: true };
  });

  app.get<{ Params: { video_id: string }; Querystring: Record<string, unknown> }>('/v1/videos/:video_id/content', { auth: true }, async (request, reply) => {
    const variant = request.query?.variant ?? 'video';
    if (variant === 'thumbnail' || variant === 'spritesheet') {
      // Checked first: another key's id or a missing video is still a 404 about the video.
      await ownedTask(tasks.repo, principalOf(request), request.params.video_id);
      throw new GatewayError(404, 'variant_unavailable', `No ${variant} is available for this video: its provider gives no ${variant === 'thumbnail' ? 'cover image' : 'sprite sheet'}; variant=video is the MP4.`, {}, 'variant');
    }
    if (variant !== 'video') throw errors.invalidRequest('variant must be video, thumbnail or spritesheet.', 'variant');
    return sendVideo(lifecycle.content, request, reply, request.params.video_id);
  });}

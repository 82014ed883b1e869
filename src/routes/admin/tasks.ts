import type { Routes } from '../../pipeline/gateway.js';
import { Type } from '@sinclair/typebox';
import type { Admin } from '../../admin/index.js';
import type { Query } from '../../admin/query.js';
import { replyWithVideo } from '../video-lifecycle.js';

const tags = ['admin: tasks'];
const Id = Type.Object({ id: Type.String({ maxLength: 128, pattern: '^[A-Za-z0-9_.-]+$' }) });

export function registerTaskRoutes(app: Routes, admin: Admin): void {
  app.get('/admin/api/tasks', { schema: { tags, summary: 'Video tasks of every key, newest first (id: the start of a task id, status, model, key, provider, from, to, limit, cursor)' } }, async (request) =>
    admin.tasks.list(request.query as Query),
  );

  app.get<{ Params: { id: string } }>('/admin/api/tasks/:id', { schema: { tags, summary: 'A task: its TaskRecord, key, channel, upstream id, cost and timeline', params: Id } }, async (request) =>
    admin.tasks.detail(request.params.id),
  );

  // The finished video, streamed as its owner gets it from /content (archive, provider URL or the
  // channel-key download; Range passed through, so a <video> element can seek): the console plays
  // it from here without ever seeing a provider URL or key.
  app.get<{ Params: { id: string } }>('/admin/api/tasks/:id/content', { schema: { tags, summary: 'The finished task\'s video, streamed (Range supported)', params: Id } }, async (request, reply) => {
    const abort = new AbortController();
    // An operator who goes away stops the provider download too.
    request.raw.once('close', () => abort.abort());
    const range = typeof request.headers.range === 'string' ? request.headers.range : undefined;
    const video = await admin.tasks.video(request.params.id, range, abort.signal);
    reply.header('cache-control', 'private, no-store');
    return replyWithVideo(reply, video);
  });
}

import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { request as undiciRequest } from 'undici';
import type { Admin } from '../../admin/index.js';
import type { Query } from '../../admin/query.js';
import { GatewayError } from '../../http/errors.js';
import type { UpstreamClient } from '../../upstream/client.js';

const tags = ['admin: tasks'];
const Id = Type.Object({ id: Type.String({ maxLength: 128, pattern: '^[A-Za-z0-9_.-]+$' }) });
const PASSED_HEADERS = ['content-type', 'content-length', 'content-range', 'accept-ranges', 'last-modified', 'etag'];

export function registerTaskRoutes(app: FastifyInstance, admin: Admin, upstream: UpstreamClient): void {
  app.get('/admin/api/tasks', { schema: { tags, summary: 'Video tasks of every key, newest first (status, model, key, provider, from, to, limit, cursor)' } }, async (request) =>
    admin.tasks.list(request.query as Query),
  );

  app.get<{ Params: { id: string } }>('/admin/api/tasks/:id', { schema: { tags, summary: 'A task: its TaskRecord, key, channel, upstream id, cost and timeline', params: Id } }, async (request) =>
    admin.tasks.detail(request.params.id),
  );

  // The finished video, streamed from the provider's URL (Range passed through, so a <video>
  // element can seek); the console plays it from here without ever seeing the provider's URL.
  app.get<{ Params: { id: string } }>('/admin/api/tasks/:id/content', { schema: { tags, summary: 'The finished task\'s video, streamed (Range supported)', params: Id } }, async (request, reply) => {
    const url = await admin.tasks.videoUrl(request.params.id);
    const range = request.headers.range;
    const ac = new AbortController();
    request.raw.on('close', () => ac.abort());
    let res;
    try {
      res = await undiciRequest(url, { method: 'GET', headers: range ? { range } : {}, dispatcher: upstream.agent, signal: ac.signal, maxRedirections: 0 } as Parameters<typeof undiciRequest>[1]);
    } catch {
      throw new GatewayError(502, 'upstream_error', 'The provider\'s video could not be fetched.');
    }
    if (res.statusCode !== 200 && res.statusCode !== 206) {
      await res.body.dump().catch(() => undefined);
      throw new GatewayError(502, 'upstream_error', `The provider answered ${res.statusCode} for the video.`);
    }
    reply.code(res.statusCode);
    for (const h of PASSED_HEADERS) {
      const v = res.headers[h];
      if (typeof v === 'string') reply.header(h, v);
    }
    if (!res.headers['content-type']) reply.header('content-type', 'video/mp4');
    reply.header('cache-control', 'private, no-store');
    return reply.send(res.body);
  });
}

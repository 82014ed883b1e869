import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { parseManifest } from '../../src/providers/kit/load.js';
import { videoAdapter } from '../../src/providers/kit/video-adapter.js';
import { UpstreamClient } from '../../src/upstream/client.js';
import { UpstreamFailure } from '../../src/upstream/failure.js';
import type { Target } from '../../src/upstream/target.js';

// Kit pieces for wire formats whose task lives in more than one answer: a kept id made of parts
// (named groups of stored_pattern, a field of the create body sent), a second read once the first
// says so (its 4xx the task's own failure), a result that is a string or a list, error bodies
// whose message sits at one of several paths, and task reads whose failure code is the task's.

const base = {
  owned_by: 'acme',
  models: [{ match: '' }],
};

const queue = parseManifest(
  stringify({
    ...base,
    type: 'queue',
    name: 'Queue',
    api: { auth: { scheme: 'header', name: 'authorization', value: 'Key {key}' }, errors: { message: ['detail', 'detail.0.msg'], code: ['error_type', 'detail.0.type'] } },
    videos: {
      modes: ['text'],
      create: { path: '/{model|segments}', body: { prompt: '{prompt}' } },
      task_id: { path: 'request_id', store: '{model}/requests/{value}', stored_pattern: '^(?<app>[a-z-]+/[a-z-]+)(/[a-z0-9./-]*)?/requests/(?<request>[a-z0-9-]+)$' },
      get: { path: '/{id.app|segments}/requests/{id.request}/status', then: { when: { status: { in: ['COMPLETED'] } }, path: '/{id.app|segments}/requests/{id.request}', into: 'response', errors_into: 'response_error' } },
      task: {
        status: { path: 'status', map: { IN_QUEUE: 'queued', COMPLETED: 'succeeded' } },
        moderation: { any: [{ path: 'response_error.code', in: ['content_policy_violation'] }], code: 'content_filtered', message: { path: 'response_error.message' } },
        result: { url: ['response.video.url', 'response.output', 'response.output.0'], expiry: { after_s: 3600 }, missing: { code: 'no_video', message: 'none' } },
      },
      estimate: { unit: 'videos', duration: 5 },
      lifetime: { seconds: 3600 },
    },
  }),
  'queue.yaml',
);

const keyed = parseManifest(
  stringify({
    ...base,
    type: 'keyed',
    name: 'Keyed',
    api: { auth: { scheme: 'bearer' }, envelope: { code: 'code', ok: [10000], message: 'message', status: 400, task_reads: false } },
    videos: {
      modes: ['text'],
      create: { path: '/submit', body: { req_key: '{facts.key}', prompt: '{prompt}' } },
      task_id: { path: 'data.task_id', store: '{request.req_key}/{value}', stored_pattern: '^(?<key>[a-z0-9_]+)/(?<task>[0-9]+)$' },
      get: { method: 'POST', path: '/result', body: { req_key: '{id.key}', task_id: '{id.task}' } },
      task: { status: { path: ['data.status', 'code'], map: { done: 'succeeded', '50500': 'failed' } }, failure: { code: { path: 'code' }, message: { path: 'message' } }, result: { url: 'data.video_url' } },
      estimate: { unit: 'videos', duration: 5 },
      lifetime: { seconds: 3600 },
    },
    models: [{ match: '', facts: { key: 'video_t2v_v1' } }],
  }),
  'keyed.yaml',
);

describe('kit: ids in parts, a second read, results as a string or a list', () => {
  let server: Server;
  const seen: { method: string; url: string; auth: string; body: any }[] = [];
  const upstream = new UpstreamClient({ connectMs: 2000, firstByteMs: 5000, idleMs: 5000 });
  const target = (model: string): Target => ({ channel: { name: 'q', type: 'queue' }, baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, apiKey: 'k-1', apiSecret: '', upstreamModel: model }) as Target;
  beforeAll(async () => {
    server = createServer((req, res) => {
      let raw = '';
      req.on('data', (c: Buffer) => (raw += c.toString()));
      req.on('end', () => {
        const body = JSON.parse(raw || '{}') as Record<string, unknown>;
        seen.push({ method: req.method ?? '', url: req.url ?? '', auth: String(req.headers.authorization), body });
        const answer = (status: number, v: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(v));
        const url = req.url ?? '';
        if (url === '/submit') return answer(200, { code: 10000, message: 'Success', data: { task_id: '42' } });
        if (url === '/result') return body.task_id === '42' ? answer(200, { code: 10000, data: { status: 'done', video_url: 'https://cdn.example/k.mp4' } }) : answer(200, { code: 50500, message: 'Internal Error', data: null });
        if (req.method === 'POST') return answer(200, { request_id: String(body.prompt) });
        const m = /^\/acme\/video\/requests\/([a-z0-9-]+)(\/status)?$/.exec(url);
        if (!m) return answer(404, { detail: 'Not found' });
        if (m[2]) return answer(200, { status: m[1] === 'queued' ? 'IN_QUEUE' : 'COMPLETED' });
        if (m[1] === 'flagged') return answer(422, { detail: [{ loc: ['body', 'prompt'], msg: 'The content could not be processed.', type: 'content_policy_violation' }] });
        if (m[1] === 'crashed') return answer(503, { detail: 'Runner disconnected', error_type: 'runner_disconnected' });
        if (m[1] === 'listed') return answer(200, { output: ['https://cdn.example/l.mp4'] });
        if (m[1] === 'string') return answer(200, { output: 'https://cdn.example/s.mp4' });
        return answer(200, { video: { url: 'https://cdn.example/v.mp4' } });
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  });
  afterAll(async () => {
    await upstream.close();
    await new Promise((r) => server.close(r));
  });

  const run = async (prompt: string) => {
    const adapter = videoAdapter(queue);
    const t = target('acme/video/v2/text-to-video');
    const { upstreamId } = await adapter.create({ upstream }, t, { prompt, mode: 'text', images: [], params: {}, metadata: {} });
    return { upstreamId, view: adapter.view(await adapter.get({ upstream }, t, upstreamId)) };
  };

  it('keeps the model with the id, reads status then result by the app id, and reads a URL from an object, a string or a list', async () => {
    const done = await run('done');
    expect(done.upstreamId).toBe('acme/video/v2/text-to-video/requests/done');
    expect(seen.slice(-3).map((s) => `${s.method} ${s.url}`)).toEqual(['POST /acme/video/v2/text-to-video', 'GET /acme/video/requests/done/status', 'GET /acme/video/requests/done']);
    expect(seen.at(-1)!.auth).toBe('Key k-1');
    expect(done.view).toMatchObject({ state: 'succeeded', result: { url: 'https://cdn.example/v.mp4' } });
    expect((await run('string')).view.result).toMatchObject({ url: 'https://cdn.example/s.mp4' });
    expect((await run('listed')).view.result).toMatchObject({ url: 'https://cdn.example/l.mp4' });
    const queued = await run('queued');
    expect(queued.view.state).toBe('queued');
    expect(seen.at(-1)!.url).toBe('/acme/video/requests/queued/status');
  });

  it('takes a 4xx of the second read as the task’s own failure, and a 5xx as a failed read', async () => {
    expect((await run('flagged')).view).toMatchObject({ state: 'failed', errorCode: 'content_filtered', errorMessage: 'The content could not be processed.' });
    const err = await run('crashed').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UpstreamFailure);
    expect(err).toMatchObject({ status: 503, providerCode: 'runner_disconnected', message: 'Runner disconnected' });
  });

  it('refuses a kept id without the parts its reads need', async () => {
    await expect(videoAdapter(queue).get({ upstream }, target('acme/video'), 'no-parts')).rejects.toThrow(/does not have the form/);
  });

  it('keeps a field of the create body sent with the id, and reads a failure code in a task read as the task’s', async () => {
    const adapter = videoAdapter(keyed);
    const t = target('any');
    const { upstreamId } = await adapter.create({ upstream }, t, { prompt: 'a corgi', mode: 'text', images: [], params: {}, metadata: {} });
    expect(upstreamId).toBe('video_t2v_v1/42');
    expect(adapter.view(await adapter.get({ upstream }, t, upstreamId))).toMatchObject({ state: 'succeeded', result: { url: 'https://cdn.example/k.mp4' } });
    expect(seen.at(-1)!.body).toEqual({ req_key: 'video_t2v_v1', task_id: '42' });
    expect(adapter.view(await adapter.get({ upstream }, t, 'video_t2v_v1/7'))).toMatchObject({ state: 'failed', errorCode: '50500', errorMessage: 'Internal Error' });
  });
});

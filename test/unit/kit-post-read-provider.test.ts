import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { parseManifest } from '../../src/providers/kit/load.js';
import { videoAdapter } from '../../src/providers/kit/video-adapter.js';
import { UpstreamClient } from '../../src/upstream/client.js';
import { UpstreamFailure } from '../../src/upstream/failure.js';
import type { Target } from '../../src/upstream/target.js';

// A wire format none of the built-in providers has, run by the kit over real HTTP: requests
// signed the Volcengine way, an action in the query string, a task read by POST with the id in
// the body, and a 2xx envelope whose code says success (10000) or failure.

const manifest = parseManifest(
  stringify({
    type: 'visual',
    name: 'Visual API',
    owned_by: 'volcengine',
    api: { auth: { scheme: 'hmac-v4', vendor: 'volc', region: 'cn-north-1', service: 'cv' }, envelope: { code: 'code', ok: [10000], message: 'message', status: 400 }, unwrap: 'data' },
    videos: {
      modes: ['text'],
      create: { path: '/?Action=Submit&Version=2022-08-31', body: { req_key: 'video_t2v', prompt: '{prompt}', seed: '{seed}' } },
      task_id: { path: 'task_id', pattern: '^[0-9]+$' },
      get: { method: 'POST', path: '/?Action=GetResult&Version=2022-08-31', body: { req_key: 'video_t2v', task_id: '{id}' } },
      task: { status: { path: 'status', map: { in_queue: 'queued', generating: 'running', done: 'succeeded', not_found: 'expired' } }, result: { url: 'video_url', expiry: { after_s: 3600 } } },
      estimate: { unit: 'videos', duration: 5 },
      lifetime: { seconds: 3600 },
    },
    models: [{ match: '' }],
  }),
  'visual.yaml',
);

describe('kit: a provider that reads tasks by POST, signed requests, an envelope', () => {
  let server: Server;
  const seen: { url: string; auth: string; body: any; hashOk: boolean }[] = [];
  const upstream = new UpstreamClient({ connectMs: 2000, firstByteMs: 5000, idleMs: 5000 });
  let target: Target;
  beforeAll(async () => {
    server = createServer((req, res) => {
      let raw = '';
      req.on('data', (c: Buffer) => (raw += c.toString()));
      req.on('end', () => {
        const body = JSON.parse(raw || '{}') as Record<string, unknown>;
        seen.push({ url: req.url ?? '', auth: String(req.headers.authorization), body, hashOk: req.headers['x-content-sha256'] === createHash('sha256').update(raw).digest('hex') });
        const answer = (v: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(v));
        if (body.prompt === 'refused') return answer({ code: 50411, message: 'Pre Text Risk Not Pass', data: null });
        if (req.url?.includes('Action=Submit')) return answer({ code: 10000, message: 'Success', data: { task_id: '7392616336519610409' } });
        return answer({ code: 10000, message: 'Success', data: { status: body.task_id === '7392616336519610409' ? 'done' : 'not_found', video_url: 'https://cdn.example/v.mp4' } });
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    target = { channel: { name: 'v', type: 'visual' }, baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, apiKey: 'AKLTaccess', apiSecret: 'secret', upstreamModel: 'video_t2v' } as Target;
  });
  afterAll(async () => {
    await upstream.close();
    await new Promise((r) => server.close(r));
  });

  it('creates, reads the task back by POST with its id in the body, and maps the result', async () => {
    const adapter = videoAdapter(manifest);
    const created = await adapter.create({ upstream }, target, { prompt: 'a corgi', mode: 'text', images: [], params: { seed: 7 }, metadata: {} });
    expect(created.upstreamId).toBe('7392616336519610409');
    const task = await adapter.get({ upstream }, target, created.upstreamId);
    expect(seen[1]).toMatchObject({ url: '/?Action=GetResult&Version=2022-08-31', body: { req_key: 'video_t2v', task_id: '7392616336519610409' }, hashOk: true });
    expect(seen[0]).toMatchObject({ body: { req_key: 'video_t2v', prompt: 'a corgi', seed: 7 }, hashOk: true });
    expect(seen[0].auth).toMatch(/^HMAC-SHA256 Credential=AKLTaccess\/\d{8}\/cn-north-1\/cv\/request, SignedHeaders=accept;content-type;host;x-content-sha256;x-date, Signature=[0-9a-f]{64}$/);
    expect(adapter.view(task)).toMatchObject({ state: 'succeeded', result: { kind: 'url', url: 'https://cdn.example/v.mp4' } });
    expect(adapter.view((await adapter.get({ upstream }, target, '1')) as Record<string, unknown>).state).toBe('expired');
  });

  it('turns a failure code in a 2xx envelope into the provider failure, with its message and code', async () => {
    const err = await videoAdapter(manifest).create({ upstream }, target, { prompt: 'refused', mode: 'text', images: [], params: {}, metadata: {} }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UpstreamFailure);
    expect(err).toMatchObject({ status: 400, providerCode: '50411', message: 'Pre Text Risk Not Pass' });
  });
});

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { parseManifest } from '../../src/providers/kit/load.js';
import { imageAdapter } from '../../src/providers/kit/image-adapter.js';
import { GatewayError } from '../../src/http/errors.js';
import { UpstreamClient } from '../../src/upstream/client.js';
import { UpstreamFailure } from '../../src/upstream/failure.js';
import type { Target } from '../../src/upstream/target.js';

// Three manifest fields of the images capability, on a queue shaped like fal's: the images of a
// finished task read from a URL its status holds (task.result_url), images the provider's safety
// checker flagged withheld (result.flagged), and an error answer that is the provider's
// content-safety refusal (moderation.errors) given to the client as a 400, not a provider failure.

const manifest = parseManifest(
  stringify({
    type: 'queue',
    name: 'Queue',
    owned_by: 'queue',
    api: { auth: { scheme: 'header', name: 'Authorization', value: 'Key {key}' }, errors: { message: 'detail', code: 'name' } },
    images: {
      create: { path: '/run', body: { prompt: '{prompt}', num_images: '{n}' } },
      task: {
        id: { path: 'request_id' },
        poll_url: { path: 'status_url', key: 'same_origin' },
        result_url: { path: 'response_url' },
        status: { path: 'status', map: { IN_QUEUE: 'queued', COMPLETED: 'succeeded' } },
      },
      result: { items: 'images', url: 'url', flagged: 'has_nsfw_concepts' },
      moderation: { any: [{ path: 'has_nsfw_concepts', in: [true] }], errors: { status: [403], codes: ['content_moderation'] } },
    },
    models: [{ match: '', image: { max_n: 4, wait: { interval_ms: 10, timeout_s: 10 } } }],
  }),
  'queue.yaml',
);

describe('kit images: result_url, flagged items, moderation errors', () => {
  let server: Server;
  let base = '';
  const seen: { url: string; auth: string }[] = [];
  const upstream = new UpstreamClient({ connectMs: 2000, firstByteMs: 5000, idleMs: 5000 });
  let target: Target;
  beforeAll(async () => {
    server = createServer((req, res) => {
      let raw = '';
      req.on('data', (c: Buffer) => (raw += c.toString()));
      req.on('end', () => {
        seen.push({ url: req.url ?? '', auth: String(req.headers.authorization) });
        const answer = (status: number, v: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(v));
        if (req.url === '/run') {
          const prompt = String((JSON.parse(raw) as { prompt: string }).prompt);
          if (prompt === 'refused') return answer(403, { name: 'content_moderation', detail: 'flagged by moderation' });
          if (prompt === 'broken') return answer(403, { name: 'forbidden', detail: 'no access' });
          return answer(200, { request_id: prompt, status_url: `${base}/requests/${prompt}/status` });
        }
        const status = /^\/requests\/([a-z-]+)\/status$/.exec(req.url ?? '');
        if (status) return answer(200, { status: 'COMPLETED', response_url: `${base}/requests/${status[1]}` });
        if (req.url === '/requests/mixed') return answer(200, { images: [{ url: 'https://cdn.example/1.png' }, { url: 'https://cdn.example/2.png' }, { url: 'https://cdn.example/3.png' }], has_nsfw_concepts: [false, true, false] });
        if (req.url === '/requests/all-flagged') return answer(200, { images: [{ url: 'https://cdn.example/1.png' }], has_nsfw_concepts: [true] });
        if (req.url === '/requests/failed') return answer(422, { detail: 'prompt is too long' });
        answer(404, { detail: 'no such request' });
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    target = { channel: { name: 'q', type: 'queue' }, baseUrl: base, apiKey: 'fal-secret', upstreamModel: 'any/model' } as Target;
  });
  afterAll(async () => {
    await upstream.close();
    await new Promise((r) => server.close(r));
  });

  const generate = (prompt: string, n = 1) => imageAdapter(manifest).generate({ upstream }, target, { prompt, n, extra: {} });

  it('reads the images from the result URL, with the key (same origin), and withholds the flagged ones', async () => {
    const got = await generate('mixed', 3);
    expect(got.data.map((d) => d.url)).toEqual(['https://cdn.example/1.png', 'https://cdn.example/3.png']);
    expect(seen.filter((s) => s.url.startsWith('/requests/mixed')).map((s) => s.url)).toEqual(['/requests/mixed/status', '/requests/mixed']);
    expect(seen.every((s) => s.auth === 'Key fal-secret')).toBe(true);
  });

  it('a task whose every image was flagged is a content-policy refusal', async () => {
    const err = await generate('all-flagged').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GatewayError);
    expect(err).toMatchObject({ status: 400, code: 'content_policy_violation' });
  });

  it("a failed run answers at its result URL: the provider's error", async () => {
    const err = await generate('failed').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UpstreamFailure);
    expect(err).toMatchObject({ status: 422, message: 'prompt is too long' });
  });

  it('an error answer matching moderation.errors is the 400 refusal; another one stays a provider failure', async () => {
    const refused = await generate('refused').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(GatewayError);
    expect(refused).toMatchObject({ status: 400, code: 'content_policy_violation', message: 'Queue refused to make the image: flagged by moderation' });
    const other = await generate('broken').catch((e: unknown) => e);
    expect(other).toBeInstanceOf(UpstreamFailure);
    expect(other).toMatchObject({ status: 403, providerCode: 'forbidden' });
  });
});

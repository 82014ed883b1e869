import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from './helpers/gateway.js';
import { createTask, readTask, waitForTask } from './helpers/video.js';

// A provider whose task ids are not path-safe (they contain '/', like operation names): the
// gateway mints the public task_id, shows it as data.id, and still polls the provider by its own id.

const UPSTREAM_ID = 'models/sim/operations/op-1';

describe('public task ids apart from upstream ids', () => {
  let upstream: Server;
  let gw: TestGateway;
  let key: string;
  const polledPaths: string[] = [];

  beforeAll(async () => {
    upstream = createServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      if (req.method === 'POST') return void res.end(JSON.stringify({ id: UPSTREAM_ID }));
      polledPaths.push(req.url ?? '');
      res.end(JSON.stringify({ id: UPSTREAM_ID, status: 'succeeded', content: { video_url: 'https://cdn.example/v.mp4' }, usage: { total_tokens: 1000 }, updated_at: Math.floor(Date.now() / 1000) }));
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    gw = await startGateway({
      simulator: { embedded: false },
      channels: [{ name: 'slashy', type: 'ark', base_url: base, api_key: 'upstream-key-123', models: ['v'] }],
      models: { v: { kind: 'video', modes: ['text'], price: { per_million_tokens: 1 } } },
    });
    key = (await gw.createKey({ creditMicros: 10_000_000 })).key;
  });

  afterAll(async () => {
    await gw?.close();
    await new Promise((r) => upstream?.close(r));
  });

  it('mints task_ + 32 base62 for an id that is not path-safe, shown as data.id, and polls by the upstream id', async () => {
    const created = await createTask(gw.url, key, { model: 'v', prompt: 'a cat' });
    expect(created.status).toBe(200);
    const taskId: string = created.body.data.task_id;
    expect(taskId).toMatch(/^task_[A-Za-z0-9]{32}$/);
    expect(created.body.data.data.id).toBe(taskId);

    const done = await waitForTask(gw.url, key, taskId, (r) => r.status === 'SUCCESS');
    expect(done.task_id).toBe(taskId);
    expect(done.data.id).toBe(taskId);
    expect(done.fail_reason).toBe('https://cdn.example/v.mp4');
    expect(polledPaths[0]).toBe(`/api/v3/contents/generations/tasks/${encodeURIComponent(UPSTREAM_ID)}`);

    // The upstream id is not a public id.
    expect((await readTask(gw.url, key, encodeURIComponent(UPSTREAM_ID))).status).not.toBe(200);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from './helpers/gateway.js';
import { createTask } from './helpers/video.js';
import { startReceiver } from './helpers/webhook-receiver.js';

// A client cannot hand an Ark task (the simulator channel's sim-video included) a callback_url of
// its own through metadata: the provider, or the embedded simulator inside the gateway's process,
// would POST wherever it points. The gateway sets callback_url itself (server.public_url); like
// Kling and MiniMax, Ark refuses it in metadata.

describe('metadata.callback_url on an Ark task', () => {
  let gw: TestGateway;
  let rx: Awaited<ReturnType<typeof startReceiver>>;
  beforeAll(async () => {
    gw = await startGateway();
    rx = await startReceiver();
  });
  afterAll(async () => {
    await gw.close();
    await rx.close();
  });

  it('is refused at create, nothing is created and nothing is POSTed', async () => {
    const { key } = await gw.createKey();
    const r = await createTask(gw.url, key, { model: 'sim-video', prompt: 'a corgi', metadata: { callback_url: rx.url } });
    expect(r.status, JSON.stringify(r.body)).toBe(400);
    expect(r.body.code).toBe('invalid_request');
    expect(r.body.message).toBe('metadata.callback_url is set by the gateway and cannot be passed through.');
    // The simulator's video lasts 0.3 s: a task created anyway would have called back by now.
    await new Promise((resolve) => setTimeout(resolve, 800));
    expect(rx.received).toEqual([]);
    const listed = (await (await fetch(`${gw.url}/v1/video/generations`, { headers: { authorization: `Bearer ${key}` } })).json()) as any;
    expect(listed.data.tasks).toEqual([]);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from './helpers/gateway.js';
import { startProbeApp, type ProbeApp } from './helpers/probe-app.js';

// The front door takes `GET /v1/video/generations/{id}` for any plain id, but a static route that
// Fastify serves under the same prefix wins in Fastify's router, so the front door must not take
// its path (src/front-door.ts, the static-route check). The probe app adds such a route.
describe('the front door and static routes under its parameter paths', () => {
  let gw: TestGateway;
  let probe: ProbeApp;
  let key: string;

  beforeAll(async () => {
    gw = await startGateway();
    probe = await startProbeApp(gw.services);
    key = (await gw.createKey()).key;
  });
  afterAll(async () => {
    await probe?.close();
    await gw?.close();
  });

  const get = (path: string) => fetch(`${probe.url}${path}`, { headers: { authorization: `Bearer ${key}` } });

  it('leaves a static route to Fastify and still serves the parameter path itself', async () => {
    const before = probe.app.frontDoor.served();
    const statik = await get('/v1/video/generations/__probe-static');
    expect(statik.status).toBe(200);
    expect(await statik.json()).toEqual({ probe: 'static' });
    expect(probe.app.frontDoor.served()).toBe(before);

    const task = await get('/v1/video/generations/task_unknown123');
    expect(task.status).toBe(404);
    expect(((await task.json()) as { code: string }).code).toBe('task_not_exist');
    expect(probe.app.frontDoor.served()).toBe(before + 1);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from './helpers/gateway.js';
import { startProbeApp, type ProbeApp } from './helpers/probe-app.js';

// A static route under a parameter path (`GET /v1/video/generations/{id}`) wins in the router; the
// parameter route still takes every other id. The probe app adds such a static route.
describe('static routes under parameter paths', () => {
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

  it('serves the static route, and the parameter route for any other id', async () => {
    const statik = await get('/v1/video/generations/__probe-static');
    expect(statik.status).toBe(200);
    expect(await statik.json()).toEqual({ probe: 'static' });

    const task = await get('/v1/video/generations/task_unknown123');
    expect(task.status).toBe(404);
    expect(((await task.json()) as { code: string }).code).toBe('task_not_exist');
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, usageRowsOf, type TestGateway } from './helpers/gateway.js';

// One usage row per request: routes write the rows of requests that reached the credit hold, the
// backstop those refused before it; a request never gets two.
describe('one usage row per request', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway();
  });
  afterAll(async () => gw.close());

  const post = (path: string, key: string, body: unknown) =>
    fetch(`${gw.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });

  it('records a refused request once, with its status and the model it named, at no cost', async () => {
    const { id, key } = await gw.createKey({ models: ['sim-chat', 'sim-video'] });
    expect((await post('/v1/chat/completions', key, { model: 'no-such-model', messages: [{ role: 'user', content: 'x' }] })).status).toBe(404);
    expect((await post('/v1/messages', key, { model: 'sim-claude', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] })).status).toBe(403);
    expect((await post('/v1/video/generations', key, { model: 'sim-video', prompt: 'x', images: [{ url: 'https://a/b.png', role: 'last_frame' }] })).status).toBe(400);
    expect((await post('/v1/images/generations', key, { prompt: 'no model' })).status).toBe(400);
    const rows = await usageRowsOf(gw.services, id);
    expect(rows.map((r) => [r.endpoint, r.status, r.model])).toEqual([
      ['chat', 404, 'no-such-model'],
      ['messages', 403, 'sim-claude'],
      ['video', 400, 'sim-video'],
      ['images.generations', 400, ''],
    ]);
    for (const r of rows) expect(r).toMatchObject({ channel: '', input_units: 0, output_units: 0, cost_micros: 0 });
  });

  it('does not add a second row to a request its route recorded, failed or not', async () => {
    const { id, key } = await gw.createKey();
    expect((await post('/v1/chat/completions', key, { model: 'sim-chat', messages: [{ role: 'user', content: 'hello' }] })).status).toBe(200);
    await fetch(`${gw.services.simulator!.url}/__sim/faults`, { method: 'POST', body: JSON.stringify({ match: 'openai.chat', kind: 'status', status: 400, count: 1 }) });
    expect((await post('/v1/chat/completions', key, { model: 'sim-chat', messages: [{ role: 'user', content: 'hello' }] })).status).toBe(400);
    const rows = await usageRowsOf(gw.services, id);
    expect(rows.map((r) => [r.status, r.channel])).toEqual([
      [200, 'simulator'],
      [400, 'simulator'],
    ]);
  });

  it('writes no row for a request without a valid key, nor for reads', async () => {
    const { id, key } = await gw.createKey();
    expect((await post('/v1/chat/completions', 'mg-' + 'x'.repeat(48), { model: 'sim-chat' })).status).toBe(401);
    expect((await fetch(`${gw.url}/v1/video/generations/cgt-none`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(404);
    expect(await usageRowsOf(gw.services, id)).toEqual([]);
  });
});

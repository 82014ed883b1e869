import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, usageRowsOf, type TestGateway } from './helpers/gateway.js';

// Every billable endpoint writes one ledger row per authenticated request, whichever door it came
// in by, also when it is refused before the credit hold (bad body, unknown or forbidden model, no
// credit). Which routes are billable is what the routes declare (`config.billable`), read from the
// app's own route table — no list kept beside them.

describe('ledger rows of refused requests on every billable route', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway();
  });
  afterAll(async () => gw.close());

  const post = (path: string, key: string, body: unknown) =>
    fetch(`${gw.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const gemini = (model: string, action = 'generateContent') => `/v1beta/models/${model}:${action}`;
  const contents = [{ role: 'user', parts: [{ text: 'hello' }] }];
  const input = 'hello';

  it('records a refused request on each route the app declares billable, under that route’s endpoint name', async () => {
    const billable = gw.app.routeTable.routes().filter((r) => r.billable);
    // Each chat format, token counting, images and both video APIs (a route that lost its declaration fails here).
    expect(new Set(billable.map((r) => r.billable))).toEqual(new Set(['chat', 'messages', 'count_tokens', 'responses', 'gemini', 'images.generations', 'images.edits', 'video']));
    expect(billable.every((r) => r.method === 'POST' && r.auth)).toBe(true);
    for (const route of billable) {
      const { id, key } = await gw.createKey();
      const res = await post(route.url.replace('*', 'no-such-model:generateContent'), key, { model: 'no-such-model' });
      expect(res.status, route.url).toBeGreaterThanOrEqual(400);
      expect(res.status, route.url).toBeLessThan(500);
      const rows = await usageRowsOf(gw.services, id);
      expect(
        rows.map((r) => [r.endpoint, r.status, r.model, Number(r.cost_micros)]),
        route.url,
      ).toEqual([[route.billable, res.status, 'no-such-model', 0]]);
    }
  });

  it('/v1/responses: a bad body, an unknown model, a forbidden model and no credit each get one row, as a served request does', async () => {
    const { id, key } = await gw.createKey({ models: ['sim-chat'] });
    const broke = await gw.createKey({ creditMicros: 0 });
    expect((await post('/v1/responses', key, { model: 'sim-chat', input: 5 })).status).toBe(400);
    expect((await post('/v1/responses', key, { model: 'no-such-model', input })).status).toBe(404);
    expect((await post('/v1/responses', key, { model: 'sim-claude', input })).status).toBe(403);
    expect((await post('/v1/responses', key, { model: 'sim-chat', input })).status).toBe(200);
    const refused = await post('/v1/responses', broke.key, { model: 'sim-chat', input });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('insufficient_quota');
    expect((await usageRowsOf(gw.services, id)).map((r) => [r.endpoint, r.status, r.model])).toEqual([
      ['responses', 400, 'sim-chat'],
      ['responses', 404, 'no-such-model'],
      ['responses', 403, 'sim-claude'],
      ['responses', 200, 'sim-chat'],
    ]);
    expect((await usageRowsOf(gw.services, broke.id)).map((r) => [r.endpoint, r.status, r.model])).toEqual([['responses', 403, 'sim-chat']]);
  });

  it('/v1beta/models/*: generateContent and streamGenerateContent refusals get one row under the model in the path', async () => {
    const { id, key } = await gw.createKey({ models: ['sim-chat'] });
    const broke = await gw.createKey({ creditMicros: 0 });
    expect((await post(gemini('sim-chat'), key, { contents: [] })).status).toBe(400);
    expect((await post(gemini('no-such-model', 'streamGenerateContent'), key, { contents })).status).toBe(404);
    expect((await post(gemini('sim-claude'), key, { contents })).status).toBe(403);
    expect((await post(gemini('sim-chat', 'countTokens'), key, { contents })).status).toBe(404);
    expect((await post(gemini('sim-chat'), key, { contents })).status).toBe(200);
    expect((await post(gemini('sim-chat', 'streamGenerateContent'), broke.key, { contents })).status).toBe(403);
    expect((await usageRowsOf(gw.services, id)).map((r) => [r.endpoint, r.status, r.model])).toEqual([
      ['gemini', 400, 'sim-chat'],
      ['gemini', 404, 'no-such-model'],
      ['gemini', 403, 'sim-claude'],
      ['gemini', 404, 'sim-chat'],
      ['gemini', 200, 'sim-chat'],
    ]);
    expect((await usageRowsOf(gw.services, broke.id)).map((r) => [r.endpoint, r.status, r.model])).toEqual([['gemini', 403, 'sim-chat']]);
  });

  it('writes no row for reads of the same families', async () => {
    const { id, key } = await gw.createKey();
    const get = (path: string) => fetch(`${gw.url}${path}`, { headers: { authorization: `Bearer ${key}` } });
    expect((await get('/v1/responses/resp_none')).status).toBe(404);
    expect((await get('/v1beta/models/no-such-model')).status).toBe(404);
    expect((await get('/v1/videos/video_none')).status).toBe(404);
    expect(await usageRowsOf(gw.services, id)).toEqual([]);
  });
});

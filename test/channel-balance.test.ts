import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { startAdminGateway, type AdminGateway } from './helpers/admin.js';
import { startSimulator, type Simulator } from '../src/simulator/server.js';
import { SIMULATOR_MODELS, SEEDANCE_MODELS } from '../src/config-file/defaults.js';
import { RUNWAY_DEFAULT_MODELS } from '../src/providers/runway/models.js';
import { KLING_DEFAULT_MODELS } from '../src/providers/kling/models.js';
import { KLING_SIMULATOR_ACCOUNT } from '../src/providers/kling/wire.js';
import { RUNWAY_VERSION } from '../src/providers/runway/wire.js';

// GET /admin/api/channels/{name}/balance: a provider's balance or quota, read from its documented
// endpoint (a manifest's `balance`, or an openai channel's settings.balance) against the
// simulator's parts written from those docs; kept a minute, never counted in health, credentials
// never in an answer or a log. And the manifests' probes: the read of a task no one created.

const SECRET_KEY = randomBytes(32).toString('base64');
const RUNWAY_KEY = `key_runway-balance-${randomBytes(8).toString('hex')}`;
const DEEPSEEK_KEY = `sk-deepseek-${randomBytes(8).toString('hex')}`;
const REVOKED_KEY = `sk-revoked-${randomBytes(8).toString('hex')}`;

describe('channel balances and declared probes', () => {
  let gw: AdminGateway;
  let sim: Simulator;
  const count = (route: string) => sim.state.counts.get(route) ?? 0;
  const runwayModel = Object.keys(RUNWAY_DEFAULT_MODELS)[0];
  const klingModel = Object.keys(KLING_DEFAULT_MODELS)[0];

  beforeAll(async () => {
    sim = await startSimulator({ videoSeconds: 0.3 });
    gw = await startAdminGateway({ models: { ...SIMULATOR_MODELS, ...SEEDANCE_MODELS, ...RUNWAY_DEFAULT_MODELS, ...KLING_DEFAULT_MODELS } }, {}, { env: { MEDIAGATE_SECRET_KEY: SECRET_KEY } });
    const add = async (body: Record<string, unknown>) => {
      const r = await gw.api('POST', '/admin/api/channels', { priority: 50, ...body });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      return r.body;
    };
    await add({ name: 'runway-1', type: 'runway', base_url: sim.url, api_key: RUNWAY_KEY, models: [runwayModel] });
    await add({ name: 'runway-revoked', type: 'runway', base_url: sim.url, api_key: REVOKED_KEY, models: [runwayModel] });
    await add({ name: 'kling-1', type: 'kling', base_url: sim.url, api_key: KLING_SIMULATOR_ACCOUNT.apiKey, api_secret: KLING_SIMULATOR_ACCOUNT.apiSecret, models: [klingModel] });
    await add({ name: 'kling-wrong', type: 'kling', base_url: sim.url, api_key: KLING_SIMULATOR_ACCOUNT.apiKey, api_secret: 'not-the-secret', models: [klingModel] });
    await add({ name: 'deepseek', type: 'openai', base_url: `${sim.url}/v1`, api_key: DEEPSEEK_KEY, settings: { balance: 'deepseek' }, models: ['sim-chat'] });
    await add({ name: 'moonshot', type: 'openai', base_url: `${sim.url}/v1`, api_key: DEEPSEEK_KEY, settings: { balance: 'moonshot' }, models: ['sim-chat'] });
    await add({ name: 'openrouter', type: 'openai', base_url: `${sim.url}/v1`, api_key: DEEPSEEK_KEY, settings: { balance: 'openrouter' }, models: ['sim-chat'] });
    await add({ name: 'openrouter-revoked', type: 'openai', base_url: `${sim.url}/v1`, api_key: REVOKED_KEY, settings: { balance: 'openrouter' }, models: ['sim-chat'] });
    await add({ name: 'plain-openai', type: 'openai', base_url: `${sim.url}/v1`, api_key: DEEPSEEK_KEY, models: ['sim-chat'] });
  });
  afterAll(async () => {
    await gw?.close();
    await sim?.close();
  });

  const balance = (name: string, query = '') => gw.api('GET', `/admin/api/channels/${name}/balance${query}`);

  it('reads Runway\'s organization credits, keeps the answer a minute, and reads again on refresh', async () => {
    const first = await balance('runway-1');
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ channel: 'runway-1', type: 'runway', supported: true, ok: true, read: 'GET /v1/organization', cached: false, cache_s: 60 });
    expect(first.body.balances).toEqual([{ label: 'credit balance', amount: 5000, unit: 'credits' }]);
    expect(count('runway.organization')).toBe(1);

    // A task spends credits at the provider; the kept answer does not see it until refreshed.
    const made = await fetch(`${sim.url}/v1/text_to_video`, {
      method: 'POST',
      headers: { authorization: `Bearer ${RUNWAY_KEY}`, 'x-runway-version': RUNWAY_VERSION, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gen4.5', promptText: 'a corgi', ratio: '1280:720', duration: 5 }),
    });
    expect(made.status).toBe(200);
    const again = await balance('runway-1');
    expect(again.body).toMatchObject({ cached: true, balances: [{ amount: 5000 }] });
    expect(count('runway.organization')).toBe(1);
    const fresh = await balance('runway-1', '?refresh=true');
    expect(fresh.body).toMatchObject({ cached: false, ok: true, balances: [{ label: 'credit balance', amount: 4950, unit: 'credits' }] });
    expect(count('runway.organization')).toBe(2);
  });

  it('sums Kling\'s resource packs in effect bought within a year (not the used-up, expired or older ones)', async () => {
    const r = await balance('kling-1');
    expect(r.body).toMatchObject({ supported: true, ok: true, read: 'GET /account/costs', balances: [{ label: 'resource packs in effect', amount: 9400, unit: 'units' }] });
    // The simulator refuses what Kling refuses: no window.
    const bare = await fetch(`${sim.url}/account/costs`, { headers: { authorization: 'Bearer x.y.z' } });
    expect(bare.status).toBe(401);
  });

  it('reads DeepSeek per currency, Moonshot\'s available balance and OpenRouter\'s credits left', async () => {
    expect((await balance('deepseek')).body).toMatchObject({
      ok: true,
      read: 'GET /user/balance (DeepSeek)',
      balances: [
        { label: 'total balance', amount: 110, unit: 'CNY' },
        { label: 'total balance', amount: 15.5, unit: 'USD' },
      ],
    });
    expect((await balance('moonshot')).body).toMatchObject({ ok: true, read: 'GET {base_url}/users/me/balance (Moonshot (api.moonshot.ai))', balances: [{ label: 'available balance', amount: 49.58894, unit: 'USD' }] });
    expect((await balance('openrouter')).body).toMatchObject({ ok: true, balances: [{ label: 'credits left', amount: 74.75, unit: 'USD' }] });
    expect(count('deepseek.balance')).toBe(1);
    expect(count('moonshot.balance')).toBe(1);
  });

  it('says clearly when a channel has no balance read, and lists which channels have one', async () => {
    const sim1 = await balance('simulator');
    expect(sim1.body).toMatchObject({ supported: false, ok: false, balances: [], fetched_at: null });
    expect(sim1.body.message).toMatch(/No balance read is known for a simulator channel/);
    expect((await balance('plain-openai')).body.message).toMatch(/set settings\.balance \(deepseek, moonshot, moonshot-cn, openrouter\)/);
    const list = (await gw.api('GET', '/admin/api/channels')).body.data as any[];
    const reads = Object.fromEntries(list.map((c) => [c.name, c.balance_read]));
    expect(reads).toMatchObject({ simulator: null, 'plain-openai': null, 'runway-1': 'GET /v1/organization', 'kling-1': 'GET /account/costs', deepseek: 'GET /user/balance (DeepSeek)' });
  });

  it('reports a refused read without keeping it, never counts it against the channel, never shows a credential', async () => {
    for (const name of ['openrouter-revoked', 'runway-revoked']) {
      const r = await balance(name);
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ supported: true, ok: false, status: 401, balances: [] });
      expect(r.body.message).toMatch(/refused the channel's credentials for its balance read/);
    }
    const calls = count('openrouter.credits');
    expect((await balance('openrouter-revoked')).body.cached).toBe(false);
    expect(count('openrouter.credits')).toBe(calls + 1);
    const kling = await balance('kling-wrong');
    expect(kling.body).toMatchObject({ ok: false, status: 401 });

    for (const name of ['openrouter-revoked', 'runway-1', 'deepseek', 'kling-wrong']) {
      const h = (await gw.api('GET', `/admin/api/channels/${name}`)).body;
      expect(h.health.instance.requests, name).toBe(0);
      expect(h.last_5m.requests ?? 0, name).toBe(0);
    }
    const everything = JSON.stringify((await gw.api('GET', '/admin/api/channels')).body) + gw.logs.join('') + gw.warnings.join('');
    for (const secret of [RUNWAY_KEY, DEEPSEEK_KEY, REVOKED_KEY, KLING_SIMULATOR_ACCOUNT.apiSecret]) expect(everything).not.toContain(secret);
  });

  it('refuses bad input with what is allowed', async () => {
    const bad = await balance('runway-1', '?refresh=maybe');
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toBe('refresh: must be true or false');
    expect((await balance('runway-1', '?force=1')).body.error.message).toBe('force: unknown parameter; allowed: refresh');
    expect((await balance('nope')).status).toBe(404);
    const shape = await gw.api('POST', '/admin/api/channels', { name: 'paypal', type: 'openai', base_url: `${sim.url}/v1`, settings: { balance: 'paypal' }, models: ['sim-chat'] });
    expect(shape.status).toBe(400);
    expect(shape.body.error.message).toMatch(/settings\.balance: must match .*deepseek\|moonshot\|moonshot-cn\|openrouter/);
    const unknown = await gw.api('POST', '/admin/api/channels', { name: 'runway-x', type: 'runway', base_url: sim.url, settings: { balance: 'x' }, models: [runwayModel] });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.message).toMatch(/settings\.balance: a runway channel takes no settings/);
  });

  it('probes Runway and Kling by reading a task no one created: not found means healthy, a refused key does not', async () => {
    const creates = count('runway.video.create') + count('kling.video.create');
    const reads = count('runway.video.get');
    const runway = await gw.api('POST', '/admin/api/channels/runway-1/probe');
    expect(runway.body).toMatchObject({ ok: true, status: 404, probe: 'GET /v1/tasks/00000000-0000-4000-8000-000000000000 of an unknown task (404 = answered)' });
    expect(count('runway.video.get')).toBe(reads + 1);
    const kling = await gw.api('POST', '/admin/api/channels/kling-1/probe');
    expect(kling.body).toMatchObject({ ok: true, status: 404 });
    expect(kling.body.message).toMatch(/code 1203/);
    expect(count('kling.video.get')).toBeGreaterThan(0);
    for (const name of ['runway-revoked', 'kling-wrong']) {
      const r = await gw.api('POST', `/admin/api/channels/${name}/probe`);
      expect(r.body, name).toMatchObject({ ok: false, status: 401 });
      expect(r.body.message).toMatch(/refused the channel's credentials/);
    }
    expect(count('runway.video.create') + count('kling.video.create')).toBe(creates); // nothing billable
  });
});

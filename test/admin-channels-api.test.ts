import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { startAdminGateway, type AdminGateway } from './helpers/admin.js';
import { usageRowsOf } from './helpers/gateway.js';
import { createTask, eventually, isFinished, readTask } from './helpers/video.js';
import { startSimulator, type Simulator } from '../src/simulator/server.js';
import { createServices } from '../src/services.js';
import { validateConfig } from '../src/config-file/loader.js';
import { applyConfig, ConfigReloader } from '../src/cluster/reload.js';
import { channelProblem } from '../src/cluster/channels.js';
import { SIMULATOR_MODELS } from '../src/config-file/defaults.js';

// /admin/api/channels: channels added, changed, switched and removed at runtime, checked like the
// config file's, their credentials sealed in the store and never shown; the config file's channels
// read-only but for their enabled switch.

const SECRET_KEY = randomBytes(32).toString('base64');
const CREDENTIAL = `sk-runtime-${randomBytes(12).toString('hex')}`;

describe('admin API: channels at runtime', () => {
  let gw: AdminGateway;
  let upstream: Simulator;

  beforeAll(async () => {
    upstream = await startSimulator({ videoSeconds: 0.3 });
    gw = await startAdminGateway({}, {}, { env: { MEDIAGATE_SECRET_KEY: SECRET_KEY }, noPoller: false });
  });
  afterAll(async () => {
    await gw?.close();
    await upstream?.close();
  });

  const chat = (key: string, model = 'sim-chat') =>
    fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));

  it('lists the config file\'s channels as source config, without credentials', async () => {
    const list = await gw.api('GET', '/admin/api/channels');
    expect(list.status).toBe(200);
    const sim = list.body.data.find((c: any) => c.name === 'simulator');
    expect(sim).toMatchObject({ source: 'config', type: 'simulator', enabled: true, api_key: 'set', breaker: 'closed' });
    expect(JSON.stringify(list.body)).not.toContain('simulator-key');
  });

  it('adds a channel that serves at once; its credential is sealed in the store and never shown', async () => {
    const made = await gw.api('POST', '/admin/api/channels', { name: 'runtime-a', type: 'simulator', base_url: upstream.url, api_key: CREDENTIAL, models: ['sim-chat', 'sim-video'], priority: -1 });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    expect(made.body).toMatchObject({ name: 'runtime-a', source: 'api', type: 'simulator', api_key: 'set', priority: -1, enabled: true, models: ['sim-chat', 'sim-video'] });

    const { id, key } = await gw.createKey();
    const answer = await chat(key);
    expect(answer.status).toBe(200);
    const rows = await usageRowsOf(gw.services, id);
    expect(rows.at(-1)!.channel).toBe('runtime-a');

    const stored = await gw.services.store.db.selectFrom('channels').selectAll().where('name', '=', 'runtime-a').executeTakeFirstOrThrow();
    expect(JSON.stringify(stored)).not.toContain(CREDENTIAL);
    expect(stored.credentials).toMatch(/^v1\./);
    for (const path of ['/admin/api/channels', '/admin/api/channels/runtime-a', '/admin/api/config', '/admin/api/audit?limit=100']) {
      const r = await gw.api('GET', path);
      expect(r.status, path).toBe(200);
      expect(JSON.stringify(r.body), path).not.toContain(CREDENTIAL);
    }
    expect(gw.logs.join('')).not.toContain(CREDENTIAL);
    const audit = await gw.api('GET', '/admin/api/audit?limit=100');
    expect(audit.body.data.find((e: any) => e.action === 'channel.create')).toMatchObject({ target: 'runtime-a', detail: { api_key: 'changed', type: 'simulator' } });
  });

  it('refuses bad channels naming the field and what it allows', async () => {
    const cases: [Record<string, unknown>, number, RegExp][] = [
      [{ name: 'x1', type: 'nope', models: ['sim-chat'] }, 400, /type: must be one of .*openai/],
      [{ name: 'x2', type: 'simulator', models: ['not-a-model'] }, 400, /models\[0\]: model "not-a-model" is not declared under models \(declared: .*sim-chat/],
      [{ name: 'x3', type: 'simulator', models: [] }, 400, /models/],
      [{ name: 'x4', type: 'simulator', models: ['sim-chat'], colour: 'red' }, 400, /colour: unknown field/],
      [{ name: 'bad name!', type: 'simulator', models: ['sim-chat'] }, 400, /name/],
      [{ name: 'x5', type: 'openai', models: ['sim-chat'] }, 400, /base_url: required/],
      [{ name: 'x6', type: 'simulator', models: ['sim-chat'], weight: 0 }, 400, /weight/],
      [{ name: 'simulator', type: 'simulator', models: ['sim-chat'] }, 409, /defined in the config file/],
      [{ name: 'runtime-a', type: 'simulator', models: ['sim-chat'] }, 409, /already exists/],
    ];
    for (const [body, status, message] of cases) {
      const r = await gw.api('POST', '/admin/api/channels', body);
      expect(r.status, JSON.stringify(body)).toBe(status);
      expect(r.body.error.message, JSON.stringify(body)).toMatch(message);
    }
    expect((await gw.api('POST', '/admin/api/channels', [1, 2])).status).toBe(400);
  });

  it('adds a name once when several requests race for it; the others get 409, none a 500', async () => {
    const answers = await Promise.all(Array.from({ length: 6 }, () => gw.api('POST', '/admin/api/channels', { name: 'racing', type: 'simulator', models: ['sim-chat'], priority: 50 })));
    expect(answers.map((a) => a.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
    expect((await gw.api('DELETE', '/admin/api/channels/racing')).status).toBe(200);
  });

  it('keeps the config file\'s channels read-only but for enabled', async () => {
    const patch = await gw.api('PATCH', '/admin/api/channels/simulator', { priority: 3 });
    expect(patch.status).toBe(409);
    expect(patch.body.error).toMatchObject({ code: 'channel_read_only', message: expect.stringMatching(/config file.*priority/) });
    const del = await gw.api('DELETE', '/admin/api/channels/simulator');
    expect(del.status).toBe(409);
    expect(del.body.error.message).toMatch(/disable it/);
  });

  it('changes a channel\'s fields, keeps its credential unless one is sent, and switches it off and on', async () => {
    const changed = await gw.api('PATCH', '/admin/api/channels/runtime-a', { weight: 5, model_map: { 'sim-chat': 'sim-chat' } });
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    expect(changed.body).toMatchObject({ weight: 5, api_key: 'set', model_map: { 'sim-chat': 'sim-chat' } });
    expect(gw.services.config.channels.find((c) => c.name === 'runtime-a')!.api_key).toBe(CREDENTIAL);
    expect((await gw.api('PATCH', '/admin/api/channels/runtime-a', { weight: 0 })).status).toBe(400);
    expect((await gw.api('PATCH', '/admin/api/channels/runtime-a', { name: 'other' })).status).toBe(400);
    expect((await gw.api('PATCH', '/admin/api/channels/nope', { weight: 2 })).status).toBe(404);

    // Both channels off: the model has no channel on this instance.
    const { key } = await gw.createKey();
    expect((await gw.api('PATCH', '/admin/api/channels/runtime-a', { enabled: false })).body.enabled).toBe(false);
    const off = await gw.api('PATCH', '/admin/api/channels/simulator', { enabled: false });
    expect(off.status).toBe(200);
    expect(off.body).toMatchObject({ source: 'config', enabled: false });
    const refused = await chat(key);
    expect(refused.status).toBe(404);
    expect(refused.body.error.message).toMatch(/no available channel/);
    expect((await gw.api('PATCH', '/admin/api/channels/simulator', { enabled: true })).status).toBe(200);
    expect((await gw.api('PATCH', '/admin/api/channels/runtime-a', { enabled: true })).status).toBe(200);
    expect((await chat(key)).status).toBe(200);
    const actions = (await gw.api('GET', '/admin/api/audit?limit=100')).body.data.map((e: any) => e.action);
    expect(actions).toEqual(expect.arrayContaining(['channel.update', 'channel.disable', 'channel.enable']));
  });

  it('refuses credentials when MEDIAGATE_SECRET_KEY is unset, and a config reload naming a stored channel', async () => {
    const bare = await startAdminGateway({}, {}, { env: {} });
    try {
      const r = await bare.api('POST', '/admin/api/channels', { name: 'keyed', type: 'simulator', api_key: 'sk-something-long', models: ['sim-chat'] });
      expect(r.status).toBe(409);
      expect(r.body.error).toMatchObject({ code: 'secret_key_missing', message: expect.stringMatching(/MEDIAGATE_SECRET_KEY/) });
      // Without credentials (the embedded simulator) no key is needed.
      expect((await bare.api('POST', '/admin/api/channels', { name: 'plain', type: 'simulator', models: ['sim-chat'] })).status).toBe(201);
      const raw = structuredClone(bare.config) as any;
      raw.channels = [{ name: 'plain', type: 'simulator', models: ['sim-chat'] }];
      await expect(applyConfig(bare.services, validateConfig(raw, 'reloaded'))).rejects.toThrow(/channel "plain" is in the config file and was also added at runtime/);
      expect(bare.services.channels.sourceOf('plain')).toBe('api');
    } finally {
      await bare.close();
    }
  });

  it('re-checks stored channels when a reload takes away a model they serve: said in the reload, the channel and the log', async () => {
    const own = await startAdminGateway({}, {}, { env: {} });
    try {
      expect((await own.api('POST', '/admin/api/channels', { name: 'two-models', type: 'simulator', models: ['sim-chat', 'sim-image'], priority: 30 })).status).toBe(201);
      expect((await own.api('GET', '/admin/api/channels/two-models')).body.problem).toBeNull();
      const warned: { obj: any; msg: string }[] = [];
      const log = { info: () => undefined, warn: (obj: object, msg: string) => warned.push({ obj, msg }) };
      const without = structuredClone(own.config) as any;
      delete without.models['sim-image'];
      for (const ch of without.channels) ch.models = ch.models.filter((m: string) => m !== 'sim-image');
      without.channels = without.channels.filter((c: any) => c.name !== 'two-models');
      const reloader = new ConfigReloader(own.services, () => validateConfig(structuredClone(without), 'reloaded'), log);
      const report = await reloader.reload('test');
      expect(report.ok, report.error).toBe(true);
      const expected = /^model sim-image is no longer declared under models, so it serves only sim-chat\. Declare them again and reload, or change the channel \(PATCH \/admin\/api\/channels\/two-models\)\.$/;
      expect(report.channel_problems).toEqual([{ channel: 'two-models', problem: expect.stringMatching(expected) }]);
      expect(warned).toContainEqual({ msg: 'stored channel not fully served after the reload', obj: { channel: 'two-models', problem: expect.stringMatching(expected) } });
      expect((await own.api('GET', '/admin/api/channels/two-models')).body.problem).toMatch(expected);
      // The model it still serves goes on.
      expect(own.services.catalog.get('sim-chat')!.channels.map((c) => c.name)).toContain('two-models');

      // Declared again: the problem is gone.
      const restored = structuredClone(without);
      restored.models['sim-image'] = SIMULATOR_MODELS['sim-image'];
      const again = await new ConfigReloader(own.services, () => validateConfig(structuredClone(restored), 'reloaded'), log).reload('test');
      expect(again.ok, again.error).toBe(true);
      expect(again.channel_problems).toEqual([]);
      expect((await own.api('GET', '/admin/api/channels/two-models')).body.problem).toBeNull();
    } finally {
      await own.close();
    }
    // A provider type that is no longer loaded.
    expect(channelProblem({ name: 'x', type: 'gone-type', models: ['a', 'b'] } as any, { a: {} })).toBe(
      'its provider type "gone-type" is no longer loaded (not built in, and no manifest of providers.dir declares it): no request can reach its provider; model b is no longer declared under models, so it serves only a. Declare them again and reload, or change the channel (PATCH /admin/api/channels/x).',
    );
  });

  it('removes a channel: it takes no new work, its open task still finishes through it', async () => {
    const made = await gw.api('POST', '/admin/api/channels', { name: 'runtime-video', type: 'simulator', base_url: upstream.url, api_key: CREDENTIAL, models: ['sim-video'], priority: -5 });
    expect(made.status).toBe(201);
    const { key } = await gw.createKey();
    const created = await createTask(gw.url, key, { model: 'sim-video', prompt: 'a corgi', duration: 5 });
    expect(created.status).toBe(200);
    const taskId = created.body.data.task_id;
    expect((await gw.services.tasks.repo.get(taskId))!.channel).toBe('runtime-video');

    const del = await gw.api('DELETE', '/admin/api/channels/runtime-video');
    expect(del.status).toBe(200);
    // Its open task still needs the credential: kept (sealed) until the task no longer does.
    expect(del.body).toEqual({ name: 'runtime-video', removed: true, credentials: 'kept_for_tasks' });
    const sealedRow = () => gw.services.store.db.selectFrom('channels').select(['credentials', 'deleted_at']).where('name', '=', 'runtime-video').executeTakeFirstOrThrow();
    expect((await sealedRow()).credentials).toMatch(/^v1\./);
    expect((await gw.api('GET', '/admin/api/channels/runtime-video')).status).toBe(404);
    expect((await gw.api('DELETE', '/admin/api/channels/runtime-video')).status).toBe(404);
    expect(gw.services.catalog.get('sim-video')!.channels.map((c) => c.name)).not.toContain('runtime-video');

    const done = await eventually(async () => {
      const r = await readTask(gw.url, key, taskId);
      return isFinished(r.body.data) && r.body.data;
    }, 15_000, 'the task of the removed channel finished');
    expect(done.status, done.fail_reason).toBe('SUCCESS');
    expect((await gw.api('GET', '/admin/api/audit?limit=100')).body.data.find((e: any) => e.action === 'channel.remove' && e.target === 'runtime-video')).toMatchObject({ detail: { credentials: 'kept_for_tasks' } });

    // Finished, but its video link is still valid and served through the channel: still kept; the
    // video still downloads with it.
    expect(await gw.services.channelsRepo.wipeSpentCredentials()).toEqual([]);
    const content = await fetch(`${gw.url}/v1/videos/${taskId}/content`, { headers: { authorization: `Bearer ${key}` } });
    expect(content.status).toBe(200);
    expect((await content.arrayBuffer()).byteLength).toBeGreaterThan(1000);
    // Once the link has expired, the sweep wipes the credential; the row stays (hidden) for the task's history.
    const expiry = Number((await gw.services.tasks.repo.get(taskId))!.url_expires_at);
    expect(await gw.services.channelsRepo.wipeSpentCredentials(expiry + 1)).toEqual(['runtime-video']);
    expect(await sealedRow()).toMatchObject({ credentials: null, deleted_at: expect.any(Number) });
    expect(Number((await sealedRow()).deleted_at)).toBeGreaterThan(0);

    // A removed channel without tasks loses its credential at once.
    expect((await gw.api('POST', '/admin/api/channels', { name: 'no-tasks', type: 'simulator', base_url: upstream.url, api_key: CREDENTIAL, models: ['sim-chat'] })).status).toBe(201);
    const gone = await gw.api('DELETE', '/admin/api/channels/no-tasks');
    expect(gone.body).toEqual({ name: 'no-tasks', removed: true, credentials: 'wiped' });
    expect((await gw.services.store.db.selectFrom('channels').select('credentials').where('name', '=', 'no-tasks').executeTakeFirstOrThrow()).credentials).toBeNull();

    // The name is free again.
    expect((await gw.api('POST', '/admin/api/channels', { name: 'runtime-video', type: 'simulator', models: ['sim-video'] })).status).toBe(201);
    expect((await gw.api('DELETE', '/admin/api/channels/runtime-video')).status).toBe(200);
  });

  it('survives a restart: a new instance on the same database serves the stored channel', async () => {
    const raw = {
      server: { host: '127.0.0.1', port: 0 },
      database: { url: gw.config.database.url },
      channels: [{ name: 'simulator', type: 'simulator', base_url: upstream.url, models: ['sim-chat'], enabled: false }],
      models: { 'sim-chat': SIMULATOR_MODELS['sim-chat'], 'sim-video': SIMULATOR_MODELS['sim-video'] },
    };
    const again = await createServices(validateConfig(raw, 'restarted'), { noPoller: true, noSimulator: true, env: { MEDIAGATE_SECRET_KEY: SECRET_KEY }, warn: () => undefined });
    try {
      const served = again.catalog.get('sim-chat')!.channels.map((c) => c.name);
      expect(served).toEqual(['runtime-a']);
      expect(again.config.channels.find((c) => c.name === 'runtime-a')!.api_key).toBe(CREDENTIAL);
    } finally {
      await again.close();
    }
    // Without the key the channel is left out (and said so), not served with a broken credential.
    const warnings: string[] = [];
    const keyless = await createServices(validateConfig(raw, 'restarted'), { noPoller: true, noSimulator: true, env: {}, warn: (m) => warnings.push(m) });
    try {
      expect(keyless.catalog.get('sim-chat')).toBeUndefined();
      expect(warnings.join('\n')).toMatch(/stored channel "runtime-a" left out: .*key/);
    } finally {
      await keyless.close();
    }
  });
});

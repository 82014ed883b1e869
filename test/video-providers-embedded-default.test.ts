import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embeddedDefault } from '../src/config-file/defaults.js';
import { startGateway, type TestGateway } from './helpers/gateway.js';
import { IMG, createTask, waitForTask } from './helpers/video.js';

// The embedded default demos every video provider offline: the simulator channel serves each
// family's models through that provider's own simulator part (the real adapter code, Kling's JWT
// included), and a real channel appears for each provider whose key is in the environment.

const FAMILIES = [
  { model: 'veo-3.1-fast-generate-preview', owner: 'google', body: { prompt: 'a corgi', duration: 4 }, data: (d: any) => expect(d.done).toBe(true) },
  { model: 'kling-v2-6', owner: 'kuaishou', body: { prompt: 'a corgi', image: IMG(1) }, data: (d: any) => expect(d.task_status).toBe('succeed') },
  { model: 'wan2.5-t2v-preview', owner: 'alibaba', body: { prompt: 'a corgi', resolution: '480p' }, data: (d: any) => expect(d.output.task_status).toBe('SUCCEEDED') },
  { model: 'MiniMax-Hailuo-02', owner: 'minimax', body: { prompt: 'a corgi' }, data: (d: any) => expect(d.status).toBe('Success') },
];

describe('video providers in the embedded default', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    const d = embeddedDefault({});
    gw = await startGateway({ channels: d.channels, models: d.models });
  });
  afterAll(async () => gw.close());

  it('lists one model of each family with its owner as an openai-video model', async () => {
    const { key } = await gw.createKey();
    const list = (await (await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } })).json()) as any;
    for (const f of FAMILIES) {
      const entry = list.data.find((m: any) => m.id === f.model);
      expect(entry, f.model).toMatchObject({ owned_by: f.owner, supported_endpoint_types: ['openai-video'] });
    }
  });

  it('runs a task of each family to SUCCESS through the simulator channel, in that provider’s wire format', async () => {
    const { key } = await gw.createKey();
    const records = await Promise.all(
      FAMILIES.map(async (f) => {
        const created = await createTask(gw.url, key, { model: f.model, ...f.body });
        expect(created.status, `${f.model}: ${JSON.stringify(created.body)}`).toBe(200);
        return waitForTask(gw.url, key, created.body.data.task_id, (r) => r.status === 'SUCCESS' || r.status === 'FAILURE');
      }),
    );
    records.forEach((r, i) => {
      expect(r.status, `${FAMILIES[i].model}: ${r.fail_reason}`).toBe('SUCCESS');
      FAMILIES[i].data(r.data);
    });
  });

  it('adds a real channel per provider key found in the environment, outranking the simulator', () => {
    const env = { GEMINI_API_KEY: 'g-key', KLING_ACCESS_KEY: 'k-ak', KLING_SECRET_KEY: 'k-sk', DASHSCOPE_API_KEY: 'd-key', MINIMAX_API_KEY: 'm-key' };
    const channels = embeddedDefault(env).channels as any[];
    const byType = (t: string) => channels.find((c) => c.type === t);
    expect(byType('gemini')).toMatchObject({ base_url: 'https://generativelanguage.googleapis.com', api_key: 'g-key', priority: 0 });
    expect(byType('gemini').models).toContain('veo-3.1-generate-preview');
    expect(byType('kling')).toMatchObject({ base_url: 'https://api-singapore.klingai.com', api_key: 'k-ak', api_secret: 'k-sk', priority: 0 });
    expect(byType('dashscope')).toMatchObject({ base_url: 'https://dashscope-intl.aliyuncs.com', api_key: 'd-key' });
    expect(byType('minimax')).toMatchObject({ base_url: 'https://api.minimax.io', api_key: 'm-key' });
    expect(byType('simulator').priority).toBeGreaterThan(0);
    // Kling signs with two keys: the access key alone adds no channel.
    expect((embeddedDefault({ KLING_ACCESS_KEY: 'k-ak' }).channels as any[]).some((c) => c.type === 'kling')).toBe(false);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embeddedDefault } from '../src/config-file/defaults.js';
import { startGateway, type TestGateway } from './helpers/gateway.js';
import { IMG, createTask, readTask, waitForTask, isFinished } from './helpers/video.js';

// Every task shows the gateway's task_id as data.id (in the create answer, every read and the
// list), whatever its provider's own object calls its id; the provider's own id field stays beside it.

const PROVIDERS = [
  { model: 'doubao-seedance-1-0-pro-250528', body: { prompt: 'a corgi' }, own: (d: any) => d.id },
  { model: 'veo-3.1-fast-generate-preview', body: { prompt: 'a corgi', duration: 4 }, own: (d: any) => d.name },
  { model: 'kling-v2-6', body: { prompt: 'a corgi', image: IMG(1) }, own: (d: any) => d.task_id },
  { model: 'wan2.5-t2v-preview', body: { prompt: 'a corgi', resolution: '480p' }, own: (d: any) => d.output?.task_id },
  { model: 'MiniMax-Hailuo-02', body: { prompt: 'a corgi' }, own: (d: any) => d.task_id },
];

describe('data.id is the task_id on every video provider of the embedded default', () => {
  let gw: TestGateway;
  let key: string;
  beforeAll(async () => {
    const d = embeddedDefault({});
    gw = await startGateway({ channels: d.channels, models: d.models });
    key = (await gw.createKey()).key;
  });
  afterAll(async () => gw.close());

  it.each(PROVIDERS)('$model: create, read while open, read finished, list', async ({ model, body, own }) => {
    const created = await createTask(gw.url, key, { model, ...body });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const id = created.body.data.task_id;
    expect(created.body.data.data.id).toBe(id);
    // The provider's own name of its id is still there (the gateway only adds `id`).
    expect(own(created.body.data.data) ?? own((await readTask(gw.url, key, id)).body.data.data)).toBeTruthy();

    const open = await readTask(gw.url, key, id);
    expect(open.body.data.data.id).toBe(id);

    const done = await waitForTask(gw.url, key, id, isFinished);
    expect(done.status, done.fail_reason).toBe('SUCCESS');
    expect(done.data.id).toBe(id);
    expect(own(done.data)).toBeTruthy();

    const list = (await (await fetch(`${gw.url}/v1/video/generations?limit=100`, { headers: { authorization: `Bearer ${key}` } })).json()) as any;
    const listed = list.data.tasks.find((t: any) => t.task_id === id);
    expect(listed.data.id).toBe(id);
  });
});

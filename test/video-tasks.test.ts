import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from './helpers/gateway.js';
import { IMG, createTask, eventually, isFinished, readTask, simVideoStats, waitForTask } from './helpers/video.js';
import { videoTokens } from '../src/providers/ark/wire.js';

// Video tasks end to end: gateway and the embedded simulator over real HTTP, in all four modes.

const TASK_ID = /^cgt-\d{14}-[0-9a-z]{5}$/;

function expectSpecRecord(record: any): void {
  expect(Object.keys(record).sort()).toEqual(['action', 'data', 'fail_reason', 'finish_time', 'progress', 'start_time', 'status', 'submit_time', 'task_id']);
  for (const k of ['task_id', 'action', 'status', 'fail_reason', 'progress']) expect(typeof record[k]).toBe('string');
  for (const k of ['submit_time', 'start_time', 'finish_time']) expect(Number.isInteger(record[k])).toBe(true);
  expect(record.progress).toMatch(/^\d{1,3}%$/);
  expect(record.data && typeof record.data).toBe('object');
}

function expectSpecSuccess(record: any): void {
  expectSpecRecord(record);
  expect(record.status).toBe('SUCCESS');
  expect(record.progress).toBe('100%');
  const p = record.data;
  expect(record.task_id).toBe(p.id);
  expect(p.status).toBe('succeeded');
  expect(record.fail_reason).toBe(p.content.video_url);
  const typed: Record<string, string> = {
    id: 'string', status: 'string', model: 'string', seed: 'integer', draft: 'boolean', ratio: 'string', resolution: 'string',
    duration: 'integer', framespersecond: 'integer', generate_audio: 'boolean', service_tier: 'string',
    execution_expires_after: 'integer', created_at: 'integer', updated_at: 'integer', usage: 'object', content: 'object',
  };
  for (const [k, t] of Object.entries(typed)) {
    if (t === 'integer') expect(Number.isInteger(p[k]), k).toBe(true);
    else expect(typeof p[k], k).toBe(t);
  }
  expect(p.ratio).toMatch(/^\d+:\d+$/);
  expect(p.resolution).toMatch(/^\d+p$/);
  expect(Number.isInteger(p.usage.total_tokens)).toBe(true);
  expect(Number.isInteger(p.usage.completion_tokens)).toBe(true);
  expect(typeof p.content.video_url).toBe('string');
  expect(p.content.video_url).toMatch(/X-Tos-Date=.*X-Tos-Expires=.*X-Tos-Signature=/);
  expect(record.submit_time).toBeGreaterThan(1_600_000_000);
  expect(record.start_time).toBeGreaterThanOrEqual(record.submit_time);
  expect(record.finish_time).toBeGreaterThanOrEqual(record.start_time);
}

describe('video tasks over the Ark wire format', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway();
  });
  afterAll(async () => gw.close());

  const cases = [
    { name: 'text-to-video', body: { prompt: 'a corgi runs on grass' }, action: 'textGenerate', roles: [] },
    { name: 'first frame (plain URL)', body: { prompt: 'wave', images: [IMG(1)] }, action: 'generate', roles: ['first_frame'] },
    { name: 'first frame (image shorthand)', body: { image: IMG(1) }, action: 'generate', roles: ['first_frame'] },
    {
      name: 'first and last frame',
      body: { prompt: 'morph', images: [{ url: IMG(2), role: 'last_frame' }, { url: IMG(1), role: 'first_frame' }] },
      action: 'firstTailGenerate',
      roles: ['first_frame', 'last_frame'],
    },
    {
      name: 'reference images',
      body: { prompt: '[图1] and [图2] dance', images: [1, 2, 3].map((n) => ({ url: IMG(n), role: 'reference_image' })) },
      action: 'referenceGenerate',
      roles: ['reference_image', 'reference_image', 'reference_image'],
    },
  ];

  for (const c of cases) {
    it(`runs a ${c.name} task to SUCCESS with action ${c.action}`, async () => {
      const { key } = await gw.createKey();
      const created = await createTask(gw.url, key, { model: 'sim-video', ...c.body });
      expect(created.status).toBe(200);
      expect(created.body.code).toBe('success');
      expect(created.body.message).toBe('');
      expectSpecRecord(created.body.data);
      expect(created.body.data.task_id).toMatch(TASK_ID);
      expect(created.body.data.status).toBe('SUBMITTED');
      expect(created.body.data.progress).toBe('0%');
      expect(created.body.data.action).toBe(c.action);
      expect(created.body.data.data.id).toBe(created.body.data.task_id);

      const done = await waitForTask(gw.url, key, created.body.data.task_id, isFinished);
      expectSpecSuccess(done);
      expect(done.action).toBe(c.action);
      const sim = await simVideoStats(gw.services.simulator!.url);
      expect(sim.tasks[done.task_id].roles).toEqual(c.roles);
      expect(sim.tasks[done.task_id].model).toBe('sim-video');
    });
  }

  it('passes generation parameters and metadata to the provider and reports them back', async () => {
    const { key } = await gw.createKey();
    const created = await createTask(gw.url, key, {
      model: 'doubao-seedance-1-0-pro-250528',
      prompt: 'city at night',
      resolution: '480p',
      ratio: '9:16',
      seconds: '3',
      seed: 11,
      camera_fixed: true,
      watermark: false,
      execution_expires_after: 7200,
      metadata: { draft: false },
    });
    expect(created.status).toBe(200);
    const done = await waitForTask(gw.url, key, created.body.data.task_id, isFinished);
    expectSpecSuccess(done);
    expect(done.data).toMatchObject({ model: 'doubao-seedance-1-0-pro-250528', resolution: '480p', ratio: '9:16', duration: 3, seed: 11, execution_expires_after: 7200, draft: false });
    expect(done.data.usage.total_tokens).toBe(videoTokens('480p', '9:16', 3));
  });

  it('reports QUEUED or IN_PROGRESS with growing progress while the provider works', async () => {
    const sim = gw.services.simulator!.state.options;
    const before = sim.videoSeconds;
    sim.videoSeconds = 3;
    try {
      const { key } = await gw.createKey();
      const created = await createTask(gw.url, key, { model: 'sim-video', prompt: 'slow' });
      const running = await waitForTask(gw.url, key, created.body.data.task_id, (r) => r.status === 'IN_PROGRESS', 10_000);
      expect(Number.parseInt(running.progress, 10)).toBeGreaterThanOrEqual(10);
      expect(Number.parseInt(running.progress, 10)).toBeLessThanOrEqual(95);
      expect(running.start_time).toBeGreaterThan(0);
      expect(running.finish_time).toBe(0);
      expect(running.fail_reason).toBe('');
      expect(running.data.status).toBe('running');
      const done = await waitForTask(gw.url, key, created.body.data.task_id, isFinished, 15_000);
      expect(done.status).toBe('SUCCESS');
    } finally {
      sim.videoSeconds = before;
    }
  });

  it('settles the credit from usage.total_tokens and writes ledger rows at create and at settle', async () => {
    const start = 5_000_000;
    const { id, key } = await gw.createKey({ creditMicros: start });
    const created = await createTask(gw.url, key, { model: 'doubao-seedance-1-0-pro-250528', prompt: 'cost check', resolution: '720p', ratio: '16:9', duration: 5 });
    expect(created.status).toBe(200);
    // While the task runs, its estimated cost is held.
    const estimate = Math.ceil(videoTokens('720p', '16:9', 5) * 2.5);
    expect(await gw.services.credit.spendable(id)).toBe(start - estimate);
    const done = await waitForTask(gw.url, key, created.body.data.task_id, isFinished);
    expect(done.status).toBe('SUCCESS');
    const cost = Math.ceil(done.data.usage.total_tokens * 2.5);
    // The simulator may report exactly the estimate: the balance alone cannot tell held from
    // settled, so the settle is awaited by the hold being gone too.
    const balance = await eventually(async () => {
      const b = await gw.services.credit.spendable(id);
      return b === start - cost && (await gw.services.credit.heldCount(id)) === 0 ? b : undefined;
    }, 5000, 'the settled balance');
    expect(balance).toBe(start - cost);
    expect(await gw.services.credit.heldCount(id)).toBe(0);
    await gw.services.ledger.flush();
    const rows = await gw.services.store.db.selectFrom('usage').selectAll().where('key_id', '=', id).orderBy('id').execute();
    expect(rows.map((r) => r.endpoint)).toEqual(['video', 'video.settle']);
    expect(Number(rows[1].cost_micros)).toBe(cost);
    expect(Number(rows[1].output_units)).toBe(done.data.usage.total_tokens);
  });

  it('answers the create with the same envelope as GET', async () => {
    const { key } = await gw.createKey();
    const created = await createTask(gw.url, key, { model: 'sim-video', prompt: 'same envelope' });
    const read = await readTask(gw.url, key, created.body.data.task_id);
    expect(read.status).toBe(200);
    expect(Object.keys(read.body).sort()).toEqual(['code', 'data', 'message']);
    expect(Object.keys(created.body).sort()).toEqual(['code', 'data', 'message']);
    expectSpecRecord(read.body.data);
  });
});

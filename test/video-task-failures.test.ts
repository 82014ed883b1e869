import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from './helpers/gateway.js';
import { createTask, eventually, isFinished, simFault, simVideoConfig, simVideoStats, waitForTask } from './helpers/video.js';

// Every way a task can fail ends FAILURE with the reason in fail_reason and the held credit back.

const START = 20_000_000;

describe('video task failures', () => {
  let gw: TestGateway;
  let sim: string;
  beforeAll(async () => {
    // grace_s 0: a task open past its execution_expires_after fails at once (gateway timeout).
    gw = await startGateway({ tasks: { poll_interval_ms: 50, tick_ms: 20, grace_s: 0, max_backoff_ms: 200 } });
    sim = gw.services.simulator!.url;
  });
  afterAll(async () => gw.close());

  async function expectRefunded(keyId: string): Promise<void> {
    await eventually(async () => (await gw.services.credit.spendable(keyId)) === START, 5000, 'the refund');
    expect(await gw.services.credit.spendable(keyId)).toBe(START);
    expect(await gw.services.credit.heldCount(keyId)).toBe(0);
    await gw.services.ledger.flush();
    const rows = await gw.services.store.db.selectFrom('usage').selectAll().where('key_id', '=', keyId).where('endpoint', '=', 'video.settle').execute();
    expect(rows.length).toBe(1);
    expect(Number(rows[0].cost_micros)).toBe(0);
  }

  async function runToEnd(prompt: string, extra: Record<string, unknown> = {}) {
    const { id, key } = await gw.createKey({ creditMicros: START });
    const created = await createTask(gw.url, key, { model: 'sim-video', prompt, ...extra });
    expect(created.status).toBe(200);
    expect(await gw.services.credit.spendable(id)).toBeLessThan(START);
    const done = await waitForTask(gw.url, key, created.body.data.task_id, isFinished);
    return { id, key, done };
  }

  function expectFailure(done: any): void {
    expect(done.status).toBe('FAILURE');
    expect(done.progress).toBe('100%');
    expect(done.finish_time).toBeGreaterThan(0);
    expect(done.task_id).toBe(done.data.id);
  }

  it('ends a provider-failed task FAILURE with the provider error code and message, and refunds it', async () => {
    const { id, done } = await runToEnd('a beach [fail]');
    expectFailure(done);
    expect(done.data.status).toBe('failed');
    expect(done.fail_reason).toMatch(/^OutputVideoSensitiveContentDetected: The request failed because the output video may contain sensitive information\./);
    await expectRefunded(id);
  });

  it('ends a provider-cancelled task FAILURE at once and refunds it', async () => {
    const { id, done } = await runToEnd('a forest [cancel]');
    expectFailure(done);
    expect(done.data.status).toBe('cancelled');
    expect(done.fail_reason).toMatch(/^cancelled: /);
    expect(done.start_time).toBe(0);
    await expectRefunded(id);
  });

  it('ends a task cancelled through the provider API (DELETE while queued) FAILURE and refunds it', async () => {
    await simVideoConfig(sim, { video_seconds: 5 });
    try {
      const { id, key } = await gw.createKey({ creditMicros: START });
      const created = await createTask(gw.url, key, { model: 'sim-video', prompt: 'to be cancelled' });
      const taskId = created.body.data.task_id;
      const del = await fetch(`${sim}/api/v3/contents/generations/tasks/${taskId}`, { method: 'DELETE', headers: { authorization: 'Bearer sim' } });
      expect(del.status).toBe(200);
      const done = await waitForTask(gw.url, key, taskId, isFinished);
      expectFailure(done);
      expect(done.fail_reason).toMatch(/^cancelled: /);
      await expectRefunded(id);
    } finally {
      await simVideoConfig(sim, { video_seconds: 0.3 });
    }
  });

  it('ends a provider-expired task FAILURE and refunds it', async () => {
    const { id, done } = await runToEnd('a river [expire]');
    expectFailure(done);
    expect(done.data.status).toBe('expired');
    expect(done.fail_reason).toMatch(/^expired: /);
    await expectRefunded(id);
  });

  it('ends a task still running past its expiry plus grace FAILURE (gateway timeout) and refunds it', async () => {
    const { id, done } = await runToEnd('a mountain [stuck]', { execution_expires_after: 1 });
    expectFailure(done);
    // The provider still says running; the gateway gave up.
    expect(done.data.status).toBe('running');
    expect(done.fail_reason).toMatch(/^timeout: /);
    await expectRefunded(id);
  });

  it('backs off on provider 429 and 5xx while polling, then still reaches SUCCESS and settles once', async () => {
    const { id, key } = await gw.createKey({ creditMicros: START });
    await simFault(sim, { match: 'ark.video.get', kind: 'status', status: 429, count: 2 });
    await simFault(sim, { match: 'ark.video.get', kind: 'status', status: 503, count: 2 });
    const created = await createTask(gw.url, key, { model: 'sim-video', prompt: 'through faults' });
    const done = await waitForTask(gw.url, key, created.body.data.task_id, isFinished);
    expect(done.status).toBe('SUCCESS');
    const cost = done.data.usage.total_tokens; // sim-video: $1 per million tokens = 1 micro-dollar per token
    await eventually(async () => (await gw.services.credit.spendable(id)) === START - cost, 5000, 'the settle');
    const row = await gw.services.tasks.repo.get(done.task_id);
    expect(row!.poll_failures).toBe(0);
  });

  it('answers a create every channel fails with 502 and keeps no hold', async () => {
    const { id, key } = await gw.createKey({ creditMicros: START });
    await simFault(sim, { match: 'ark.video.create', kind: 'status', status: 500, count: 3 });
    const res = await createTask(gw.url, key, { model: 'sim-video', prompt: 'never created' });
    expect(res.status).toBe(502);
    expect(res.body).toEqual({ code: 'upstream_error', message: expect.any(String), data: null });
    expect(await gw.services.credit.spendable(id)).toBe(START);
    expect(await gw.services.credit.heldCount(id)).toBe(0);
    await fetch(`${sim}/__sim/faults`, { method: 'DELETE' });
  });

  it('answers a create the provider rate-limits with 429 and Retry-After, and keeps no hold', async () => {
    const { id, key } = await gw.createKey({ creditMicros: START });
    await simFault(sim, { match: 'ark.video.create', kind: 'status', status: 429, count: 3 });
    const res = await fetch(`${gw.url}/v1/video/generations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sim-video', prompt: 'busy' }),
    });
    expect(res.status).toBe(429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(((await res.json()) as any).code).toBe('rate_limit_exceeded');
    expect(await gw.services.credit.spendable(id)).toBe(START);
    await fetch(`${sim}/__sim/faults`, { method: 'DELETE' });
  });

  it('fails and refunds a task the provider no longer knows (404 on poll)', async () => {
    await simVideoConfig(sim, { video_seconds: 5 });
    try {
      const { id, key } = await gw.createKey({ creditMicros: START });
      const created = await createTask(gw.url, key, { model: 'sim-video', prompt: 'forgotten' });
      const taskId = created.body.data.task_id;
      // Cancel, then delete the cancelled record: the provider forgets the task.
      const headers = { authorization: 'Bearer sim' };
      await fetch(`${sim}/api/v3/contents/generations/tasks/${taskId}`, { method: 'DELETE', headers });
      await fetch(`${sim}/api/v3/contents/generations/tasks/${taskId}`, { method: 'DELETE', headers });
      expect((await simVideoStats(sim)).tasks[taskId]).toBeUndefined();
      const done = await waitForTask(gw.url, key, taskId, isFinished);
      expect(done.status).toBe('FAILURE');
      expect(done.fail_reason.startsWith('cancelled: ') || done.fail_reason.startsWith('ResourceNotFound: ')).toBe(true);
      await expectRefunded(id);
    } finally {
      await simVideoConfig(sim, { video_seconds: 0.3 });
    }
  });
});

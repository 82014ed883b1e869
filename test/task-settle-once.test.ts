import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from './helpers/gateway.js';
import { createServices, type Services } from '../src/services.js';
import { createTask, eventually, readTask, simVideoStats } from './helpers/video.js';

// Two pollers (two store connections, as two instances would have) racing on the same tasks:
// the guarded status move lets exactly one of them settle or refund each task.

const START = 50_000_000;

describe('two pollers racing on one database', () => {
  let gw: TestGateway;
  let a: Services;
  let b: Services;
  beforeAll(async () => {
    // The gateway's own poller ticks once at start and then not for an hour: the test drives A and B.
    gw = await startGateway({ tasks: { poll_interval_ms: 50, tick_ms: 3_600_000 } });
    a = await createServices(gw.config, { noSimulator: true, noPoller: true });
    b = await createServices(gw.config, { noSimulator: true, noPoller: true });
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await gw.close();
  });

  async function settleRows(keyId: string) {
    await Promise.all([gw.services.ledger.flush(), a.ledger.flush(), b.ledger.flush()]);
    return gw.services.store.db.selectFrom('usage').selectAll().where('key_id', '=', keyId).where('endpoint', '=', 'video.settle').execute();
  }

  async function reservationsOf(keyId: string) {
    return gw.services.store.db.selectFrom('reservations').selectAll().where('key_id', '=', keyId).execute();
  }

  async function providerFinished(taskId: string, status: string) {
    await eventually(async () => (await simVideoStats(gw.services.simulator!.url)).tasks[taskId]?.status === status, 10_000, `provider ${status}`);
  }

  it('settles a succeeded task once when both poll it at the same moment', async () => {
    const { id, key } = await gw.createKey({ creditMicros: START });
    const created = await createTask(gw.url, key, { model: 'sim-video', prompt: 'race to success' });
    const taskId = created.body.data.task_id;
    await providerFinished(taskId, 'succeeded');
    const row = (await a.tasks.repo.get(taskId))!;
    const results = await Promise.all([a.tasks.poller.pollTask(row), b.tasks.poller.pollTask(row), a.tasks.poller.pollTask(row), b.tasks.poller.pollTask(row)]);
    for (const r of results) expect(r.status).toBe('SUCCESS');

    const record = (await readTask(gw.url, key, taskId)).body.data;
    expect(record.status).toBe('SUCCESS');
    const cost = record.data.usage.total_tokens;
    expect(await gw.services.credit.spendable(id)).toBe(START - cost);
    const res = await reservationsOf(id);
    expect(res.length).toBe(1);
    expect(res[0].state).toBe('settled');
    expect(Number(res[0].charged_micros)).toBe(cost);
    const rows = await settleRows(id);
    expect(rows.length).toBe(1);
    expect(Number(rows[0].cost_micros)).toBe(cost);
  });

  it('refunds a failed task once when both poll it at the same moment', async () => {
    const { id, key } = await gw.createKey({ creditMicros: START });
    const created = await createTask(gw.url, key, { model: 'sim-video', prompt: 'race to failure [fail]' });
    const taskId = created.body.data.task_id;
    await providerFinished(taskId, 'failed');
    const row = (await a.tasks.repo.get(taskId))!;
    await Promise.all([a.tasks.poller.pollTask(row), b.tasks.poller.pollTask(row), a.tasks.poller.pollTask(row), b.tasks.poller.pollTask(row)]);
    expect((await readTask(gw.url, key, taskId)).body.data.status).toBe('FAILURE');
    expect(await gw.services.credit.spendable(id)).toBe(START);
    const res = await reservationsOf(id);
    expect(res.length).toBe(1);
    expect(res[0].state).toBe('released');
    expect((await settleRows(id)).length).toBe(1);
  });

  it('settles or refunds each task once when both read the same tasks in batched reads at the same moment', async () => {
    const { id, key } = await gw.createKey({ creditMicros: START });
    const prompts = ['batch one', 'batch two [fail]', 'batch three', 'batch four'];
    const ids: string[] = [];
    for (const p of prompts) ids.push((await createTask(gw.url, key, { model: 'sim-video', prompt: p })).body.data.task_id);
    for (const [i, taskId] of ids.entries()) await providerFinished(taskId, prompts[i].includes('[fail]') ? 'failed' : 'succeeded');
    const lists = async () => ((await (await fetch(`${gw.services.simulator!.url}/__sim/stats`)).json()) as any).counts['ark.video.list'] ?? 0;
    const listsBefore = await lists();
    const rows = await Promise.all(ids.map(async (t) => (await a.tasks.repo.get(t))!));
    const results = await Promise.all([a.tasks.poller.pollBatch(rows), b.tasks.poller.pollBatch(rows), a.tasks.poller.pollBatch(rows)]);
    expect(await lists()).toBe(listsBefore + 3);
    for (const r of results) expect(r.map((t) => t.status)).toEqual(['SUCCESS', 'FAILURE', 'SUCCESS', 'SUCCESS']);

    let expectedCost = 0;
    for (const taskId of ids) {
      const r = (await readTask(gw.url, key, taskId)).body.data;
      if (r.status === 'SUCCESS') expectedCost += r.data.usage.total_tokens;
    }
    expect(await gw.services.credit.spendable(id)).toBe(START - expectedCost);
    const res = await reservationsOf(id);
    expect(res.map((r) => r.state).sort()).toEqual(['released', 'settled', 'settled', 'settled']);
    expect((await settleRows(id)).length).toBe(ids.length);
  });

  it('brings many tasks to their end with both pollers ticking, each settled or refunded exactly once', async () => {
    const { id, key } = await gw.createKey({ creditMicros: START });
    const prompts = ['one', 'two [fail]', 'three', 'four [cancel]', 'five', 'six [expire]', 'seven', 'eight'];
    const ids: string[] = [];
    for (const p of prompts) ids.push((await createTask(gw.url, key, { model: 'sim-video', prompt: p })).body.data.task_id);

    await eventually(async () => {
      await Promise.all([a.tasks.poller.tick(), b.tasks.poller.tick()]);
      await new Promise((r) => setTimeout(r, 30));
      return (await a.tasks.repo.countOpen()) === 0;
    }, 20_000, 'every task to finish');

    let expectedCost = 0;
    for (const taskId of ids) {
      const r = (await readTask(gw.url, key, taskId)).body.data;
      expect(['SUCCESS', 'FAILURE']).toContain(r.status);
      if (r.status === 'SUCCESS') expectedCost += r.data.usage.total_tokens;
    }
    await eventually(async () => (await gw.services.credit.spendable(id)) === START - expectedCost, 5000, 'the balance');
    const res = await reservationsOf(id);
    expect(res.length).toBe(ids.length);
    expect(res.every((r) => r.state === 'settled' || r.state === 'released')).toBe(true);
    expect((await settleRows(id)).length).toBe(ids.length);
  });

  it('leases each due task to one poller: concurrent claims are disjoint, and a lease keeps others out', async () => {
    const sim = gw.services.simulator!.state.options;
    const before = sim.videoSeconds;
    sim.videoSeconds = 60; // the tasks stay open throughout
    try {
      const { key } = await gw.createKey();
      const ids: string[] = [];
      for (let i = 0; i < 6; i++) ids.push((await createTask(gw.url, key, { model: 'sim-video', prompt: `lease ${i}` })).body.data.task_id);
      const now = Date.now() + 1000; // every task is due by then
      const [ca, cb] = await Promise.all([
        a.tasks.repo.claimDue('owner-a', now, now + 120_000, now + 60_000, 100),
        b.tasks.repo.claimDue('owner-b', now, now + 120_000, now + 60_000, 100),
      ]);
      const mine = (rows: { task_id: string }[]) => rows.map((r) => r.task_id).filter((t) => ids.includes(t));
      const claimedA = mine(ca);
      const claimedB = mine(cb);
      expect(claimedA.filter((t) => claimedB.includes(t))).toEqual([]);
      expect([...claimedA, ...claimedB].sort()).toEqual([...ids].sort());
      // Due again, but leased: B cannot take A's tasks; A can take its own back.
      const later = now + 61_000;
      expect(mine(await b.tasks.repo.claimDue('owner-b2', later, later + 60_000, later + 100, 100)).filter((t) => claimedA.includes(t))).toEqual([]);
      if (claimedA.length) expect(mine(await a.tasks.repo.claimDue('owner-a', later, later + 60_000, later + 100, 100))).toEqual(expect.arrayContaining(claimedA));
    } finally {
      sim.videoSeconds = before;
    }
  });
});
